// Under `mpirun -np 2`: the DCGAN trained by 2 MPI ranks (sync-BN, no dropout, even and
// uneven shares) must end with the weights rank 0 computes alone on the whole batch, to
// fp32 round-off, and both replicas must hold the same bytes. Exit 0 on success.
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"
#include "tests/train/equivalence_harness.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"

namespace {

using gantry::testing::EquivalenceSetup;
using gantry::testing::TrainedParams;

constexpr double kTolerance = 2e-5;  // as in data_parallel_equivalence_test.cc

// FNV-1a over the parameters' bytes: equal on both ranks iff the replicas agree.
uint64_t Fingerprint(const TrainedParams& p) {
  uint64_t h = 1469598103934665603ull;
  for (const std::vector<float>* v : {&p.g, &p.d}) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(v->data());
    for (size_t i = 0; i < v->size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

// Returns true when this setup passes; rank 0 prints the verdict.
bool Check(gantry::MpiCommunicator& mpi, const char* name, const EquivalenceSetup& setup) {
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
    // The single-process reference, computed here on rank 0 alone.
    std::unique_ptr<gantry::Communicator> solo = gantry::LocalGroup(1).Rank(0);
    const TrainedParams reference = *gantry::testing::TrainFewSteps(*solo, setup);
    const double g = gantry::testing::MaxScaledDifference(mine->g, reference.g);
    const double d = gantry::testing::MaxScaledDifference(mine->d, reference.d);
    ok = g < kTolerance && d < kTolerance && prints[0] == prints[1];
    std::printf("%s %s: G diff %.2e, D diff %.2e (tolerance %.0e), replicas %s\n", ok ? "PASS" : "FAIL", name, g,
                d, kTolerance, prints[0] == prints[1] ? "identical" : "DIFFER");
  }
  if (!mpi.Broadcast(&ok, sizeof(ok), 0, {30.0}).ok()) mpi.Abort(1);
  return ok != 0;
}

}  // namespace

int main(int argc, char** argv) {
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
  bool ok = Check(**mpi, "even shares 4/4", even);
  ok = Check(**mpi, "uneven shares 3/5", uneven) && ok;
  if ((*mpi)->rank() == 0) std::printf("%d passed, %d failed\n", ok ? 2 : 0, ok ? 0 : 2);
  return ok ? 0 : 1;
}
