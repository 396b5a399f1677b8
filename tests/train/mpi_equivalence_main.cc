// Under `mpirun -np 2`: the DCGAN trained by 2 MPI ranks (sync-BN, no dropout, even and
// uneven shares) must end with the weights rank 0 computes alone on the whole batch, to
// fp32 round-off (with a bf16 wire: to bf16 rounding), and both replicas must hold the
// same bytes. A forced overflow on rank 1 must make both ranks skip the step. Exit 0 on
// success.
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"
#include "tests/train/equivalence_harness.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"

namespace {

using gantry::testing::EquivalenceSetup;
using gantry::testing::TrainedParams;

constexpr double kTolerance = 2e-5;  // as in data_parallel_equivalence_test.cc

// FNV-1a over the parameters' bytes: equal on both ranks iff the replicas agree.
uint64_t Fingerprint(const TrainedParams& p) {
  const uint64_t h = gantry::testing::Fingerprint(p.g.data(), p.g.size() * sizeof(float));
  return gantry::testing::Fingerprint(p.d.data(), p.d.size() * sizeof(float), h);
}

// What a setup is compared against: the fp32 single-rank run, to round-off (tolerance in
// MaxScaledDifference units) or to bf16 rounding (in units of the largest update).
enum class Compare { kRoundOff, kBf16Wire };

constexpr double kBf16WireTolerance = 5 * 0x1p-8;  // as in mixed_precision_step_test.cc

// Returns true when this setup passes; rank 0 prints the verdict.
bool Check(gantry::MpiCommunicator& mpi, const char* name, const EquivalenceSetup& setup,
           Compare compare = Compare::kRoundOff) {
  absl::StatusOr<TrainedParams> mine = gantry::testing::TrainFewSteps(mpi, setup);
  if (!mine.ok()) {
    std::fprintf(stderr, "rank %d: %s: %s\n", mpi.rank(), name, std::string(mine.status().message()).c_str());
    mpi.Abort(1);
  }
  const uint64_t print = Fingerprint(*mine);
  uint64_t prints[2] = {0, 0};
  if (!mpi.Gather(&print, sizeof(print), prints, 0, {30.0}).ok()) mpi.Abort(1);
  int ok = 1;
  if (mpi.rank() == 0) {
    // The single-process fp32 reference, computed here on rank 0 alone.
    std::unique_ptr<gantry::Communicator> solo = gantry::LocalGroup(1).Rank(0);
    EquivalenceSetup plain = setup;
    plain.mixed = gantry::MixedPrecision{};
    const TrainedParams reference = *gantry::testing::TrainFewSteps(*solo, plain);
    double g = 0, d = 0, tolerance = kTolerance;
    if (compare == Compare::kRoundOff) {
      g = gantry::testing::MaxScaledDifference(mine->g, reference.g);
      d = gantry::testing::MaxScaledDifference(mine->d, reference.d);
    } else {
      g = gantry::testing::DifferenceInUpdates(mine->g, reference.g, reference.initial_g);
      d = gantry::testing::DifferenceInUpdates(mine->d, reference.d, reference.initial_d);
      tolerance = kBf16WireTolerance;
    }
    ok = g < tolerance && d < tolerance && prints[0] == prints[1];
    std::printf("%s %s: G diff %.2e, D diff %.2e (tolerance %.1e), replicas %s\n", ok ? "PASS" : "FAIL", name, g,
                d, tolerance, prints[0] == prints[1] ? "identical" : "DIFFER");
  }
  if (!mpi.Broadcast(&ok, sizeof(ok), 0, {30.0}).ok()) mpi.Abort(1);
  return ok != 0;
}

// An inf in rank 1's D gradient at step 2: both ranks skip D's step 2 (weights and Adam
// state unchanged, scale halved, one skip), G trains on, and the replicas stay identical.
bool CheckForcedOverflow(gantry::MpiCommunicator& mpi, gantry::WireDtype wire) {
  EquivalenceSetup setup;
  setup.optimizer = "adam";
  setup.mixed.allreduce_dtype = wire;
  setup.mixed.loss_scale.mode = gantry::LossScaleMode::kDynamic;
  setup.mixed.loss_scale.init_scale = 1024.0f;
  setup.mixed.inject_inf = gantry::InjectInf{/*step=*/2, /*rank=*/1, /*g=*/false, /*d=*/true};
  absl::StatusOr<TrainedParams> mine = gantry::testing::TrainFewSteps(mpi, setup);
  if (!mine.ok()) mpi.Abort(1);
  const auto& d = mine->d_steps;
  const auto& g = mine->g_steps;
  int ok = d[0].stepped && !d[1].stepped && d[2].stepped && d[1].fingerprint == d[0].fingerprint &&
           d[2].fingerprint != d[1].fingerprint && d[1].scale == 512.0f && d[1].skipped == 1 &&
           d[1].optimizer_steps == 1 && g[1].stepped && g[1].scale == 1024.0f && g[2].skipped == 0;
  const uint64_t print = Fingerprint(*mine);
  uint64_t prints[2] = {0, 0};
  int oks[2] = {0, 0};
  if (!mpi.Gather(&print, sizeof(print), prints, 0, {30.0}).ok()) mpi.Abort(1);
  if (!mpi.Gather(&ok, sizeof(ok), oks, 0, {30.0}).ok()) mpi.Abort(1);
  if (mpi.rank() == 0) {
    ok = oks[0] && oks[1] && prints[0] == prints[1];
    std::printf("%s forced overflow on rank 1, %s wire: D step 2 skipped on rank 0: %s, rank 1: %s; replicas %s\n",
                ok ? "PASS" : "FAIL", gantry::WireDtypeName(wire).c_str(), oks[0] ? "yes" : "NO",
                oks[1] ? "yes" : "NO", prints[0] == prints[1] ? "identical" : "DIFFER");
  }
  if (!mpi.Broadcast(&ok, sizeof(ok), 0, {30.0}).ok()) mpi.Abort(1);
  return ok != 0;
}

// The exchange overlapped with backward (small buckets, so most leave mid-backward, on the
// duplicate communicator's thread) against the exchange after backward, both over MPI:
// every parameter bit equal, on both ranks.
bool CheckOverlap(gantry::MpiCommunicator& mpi, const char* name, EquivalenceSetup setup) {
  setup.overlap.reset();
  absl::StatusOr<TrainedParams> plain = gantry::testing::TrainFewSteps(mpi, setup);
  setup.overlap = gantry::BucketCaps{.bucket_mb = 0.2, .first_mb = 0.01};
  absl::StatusOr<TrainedParams> overlapped = gantry::testing::TrainFewSteps(mpi, setup);
  if (!plain.ok() || !overlapped.ok()) {
    std::fprintf(stderr, "rank %d: %s: %s\n", mpi.rank(), name,
                 std::string((plain.ok() ? overlapped.status() : plain.status()).message()).c_str());
    mpi.Abort(1);
  }
  int same = plain->g == overlapped->g && plain->d == overlapped->d;
  int sames[2] = {0, 0};
  if (!mpi.Gather(&same, sizeof(same), sames, 0, {30.0}).ok()) mpi.Abort(1);
  int ok = sames[0] && sames[1];
  if (mpi.rank() == 0) {
    std::printf("%s %s: overlapped vs after backward: rank 0 %s, rank 1 %s\n", ok ? "PASS" : "FAIL", name,
                sames[0] ? "bit-identical" : "DIFFERS", sames[1] ? "bit-identical" : "DIFFERS");
  }
  if (!mpi.Broadcast(&ok, sizeof(ok), 0, {30.0}).ok()) mpi.Abort(1);
  return ok != 0;
}

}  // namespace

int main(int argc, char** argv) {
  gantry::PreferRingNonBlockingAllReduce();
  auto mpi = gantry::MpiCommunicator::Create(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "%s\n", std::string(mpi.status().message()).c_str());
    return 1;
  }
  if ((*mpi)->size() != 2) {
    std::fprintf(stderr, "run me with mpirun -np 2\n");
    return 1;
  }
  EquivalenceSetup even;
  EquivalenceSetup uneven;
  uneven.shares = {3, 5};
  EquivalenceSetup bf16_wire;
  bf16_wire.mixed.allreduce_dtype = gantry::WireDtype::kBf16;
  bf16_wire.mixed.loss_scale.mode = gantry::LossScaleMode::kDynamic;
  int passed = 0, failed = 0;
  for (bool ok : {Check(**mpi, "even shares 4/4", even), Check(**mpi, "uneven shares 3/5", uneven),
                  Check(**mpi, "bf16 wire, dynamic loss scale", bf16_wire, Compare::kBf16Wire),
                  CheckForcedOverflow(**mpi, gantry::WireDtype::kFp32),
                  CheckForcedOverflow(**mpi, gantry::WireDtype::kBf16),
                  CheckOverlap(**mpi, "overlap, fp32 wire, uneven shares", uneven),
                  CheckOverlap(**mpi, "overlap, bf16 wire, dynamic loss scale", bf16_wire)}) {
    (ok ? passed : failed) += 1;
  }
  if ((*mpi)->rank() == 0) std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
