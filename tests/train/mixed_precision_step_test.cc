// DataParallelStep with loss scaling and a bf16 wire, on thread ranks: scaling by powers
// of two changes no fp32 bit, a bf16 wire stays within bf16 rounding of fp32, replicas
// stay bit-identical, and a forced overflow on one rank makes EVERY rank skip that
// network's step (the decision is taken from identical all-reduced bytes, no collective).

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/train/equivalence_harness.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

using testing::EquivalenceSetup;
using testing::MaxScaledDifference;
using testing::TrainedParams;

std::vector<TrainedParams> TrainMixedOnRanks(int ranks, const EquivalenceSetup& setup) {
  absl::StatusOr<std::vector<TrainedParams>> out = testing::TrainOnThreadRanks(ranks, setup);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<TrainedParams>(static_cast<size_t>(ranks));
}

LossScaleConfig Dynamic(float init, int64_t growth_interval) {
  LossScaleConfig c;
  c.mode = LossScaleMode::kDynamic;
  c.init_scale = init;
  c.growth_interval = growth_interval;
  return c;
}

TEST(MixedPrecisionStep, PowerOfTwoLossScalingChangesNoFp32Bit) {
  EquivalenceSetup plain;
  plain.optimizer = "adam";
  plain.steps = 2;
  EquivalenceSetup scaled = plain;
  scaled.mixed.loss_scale = Dynamic(65536.0f, 1);  // step 2 runs at 131072
  const std::vector<TrainedParams> a = TrainMixedOnRanks(2, plain);
  const std::vector<TrainedParams> b = TrainMixedOnRanks(2, scaled);
  EXPECT_EQ(b[0].g_steps[0].scale, 131072.0f);
  EXPECT_EQ(b[0].d_steps[1].scale, 262144.0f);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(a[r].g, b[r].g) << "rank " << r;
    EXPECT_EQ(a[r].d, b[r].d) << "rank " << r;
  }
}

// A bf16 gradient is rounded once when packed and once per pair sum (n ranks: n times),
// each time by at most 2^-9 relative; through 3 steps the weights then differ from the
// fp32 run by well under 1 % of the largest update (measured 0.3-0.65 %). Dropping or
// doubling one rank's share would be off by tens of percent.
constexpr double kBf16WireTolerance = 5 * 0x1p-8;  // in units of the largest update

TEST(MixedPrecisionStep, Bf16WireKeepsReplicasIdenticalWithinBf16RoundingOfFp32) {
  EquivalenceSetup fp32;
  EquivalenceSetup bf16 = fp32;
  bf16.mixed.allreduce_dtype = WireDtype::kBf16;
  bf16.mixed.loss_scale = Dynamic(65536.0f, 2000);
  const TrainedParams reference = TrainMixedOnRanks(1, fp32)[0];
  // 3 ranks: two pair sums per element (mpi_equivalence_check covers 2 ranks over MPI).
  for (int ranks : {3}) {
    SCOPED_TRACE(absl::StrCat(ranks, " ranks"));
    const std::vector<TrainedParams> replicas = TrainMixedOnRanks(ranks, bf16);
    EXPECT_LT(testing::DifferenceInUpdates(replicas[0].g, reference.g, reference.initial_g), kBf16WireTolerance);
    EXPECT_LT(testing::DifferenceInUpdates(replicas[0].d, reference.d, reference.initial_d), kBf16WireTolerance);
    EXPECT_NE(replicas[0].d, reference.d);  // the wire really was bf16
    for (int r = 1; r < ranks; ++r) {
      EXPECT_EQ(replicas[r].g, replicas[0].g) << "replica " << r << " drifted";
      EXPECT_EQ(replicas[r].d, replicas[0].d) << "replica " << r << " drifted";
    }
  }
}

void ExpectSameRecords(const std::vector<TrainedParams>& replicas) {
  for (size_t r = 1; r < replicas.size(); ++r) {
    for (size_t s = 0; s < replicas[0].g_steps.size(); ++s) {
      for (auto net : {&TrainedParams::g_steps, &TrainedParams::d_steps}) {
        const testing::NetworkAfterStep& mine = (replicas[r].*net)[s];
        const testing::NetworkAfterStep& root = (replicas[0].*net)[s];
        EXPECT_EQ(mine.stepped, root.stepped) << "rank " << r << " step " << s + 1;
        EXPECT_EQ(mine.scale, root.scale) << "rank " << r << " step " << s + 1;
        EXPECT_EQ(mine.fingerprint, root.fingerprint) << "rank " << r << " step " << s + 1;
      }
    }
  }
}

// The poisoned network's step 2 is skipped on every rank: parameters and optimizer state
// as after step 1, the scale halved, one skip counted; step 3 trains again.
void ExpectSkippedAtStepTwo(const std::vector<testing::NetworkAfterStep>& n, float init_scale, bool dynamic) {
  EXPECT_TRUE(n[0].stepped);
  EXPECT_FALSE(n[1].stepped);
  EXPECT_EQ(n[1].fingerprint, n[0].fingerprint) << "weights or optimizer state changed in a skipped step";
  EXPECT_EQ(n[1].optimizer_steps, 1);
  EXPECT_EQ(n[1].skipped, 1);
  EXPECT_EQ(n[1].scale, dynamic ? init_scale / 2 : init_scale);
  EXPECT_TRUE(n[2].stepped);
  EXPECT_NE(n[2].fingerprint, n[1].fingerprint);
  EXPECT_EQ(n[2].optimizer_steps, 2);
  EXPECT_EQ(n[2].skipped, 1);
}

void ExpectNeverSkipped(const std::vector<testing::NetworkAfterStep>& n, float init_scale) {
  for (size_t s = 0; s < n.size(); ++s) {
    EXPECT_TRUE(n[s].stepped) << "step " << s + 1;
    EXPECT_EQ(n[s].scale, init_scale);
    EXPECT_EQ(n[s].skipped, 0);
    if (s > 0) {
      EXPECT_NE(n[s].fingerprint, n[s - 1].fingerprint);
    }
  }
}

class ForcedOverflowTest : public ::testing::TestWithParam<WireDtype> {};

TEST_P(ForcedOverflowTest, AnInfOnRankOneSkipsDsStepOnEveryRankAndGTrainsOn) {
  EquivalenceSetup setup;
  setup.optimizer = "adam";
  setup.mixed.allreduce_dtype = GetParam();
  setup.mixed.loss_scale = Dynamic(1024.0f, 2000);
  setup.mixed.inject_inf = InjectInf{/*step=*/2, /*rank=*/1, /*g=*/false, /*d=*/true};
  const std::vector<TrainedParams> replicas = TrainMixedOnRanks(2, setup);
  for (size_t r = 0; r < replicas.size(); ++r) {
    SCOPED_TRACE(absl::StrCat("rank ", r));
    ExpectSkippedAtStepTwo(replicas[r].d_steps, 1024.0f, /*dynamic=*/true);
    ExpectNeverSkipped(replicas[r].g_steps, 1024.0f);
  }
  ExpectSameRecords(replicas);
  EXPECT_EQ(replicas[0].d, replicas[1].d);
}

INSTANTIATE_TEST_SUITE_P(Wire, ForcedOverflowTest, ::testing::Values(WireDtype::kFp32, WireDtype::kBf16),
                         [](const ::testing::TestParamInfo<WireDtype>& info) { return WireDtypeName(info.param); });

TEST(ForcedOverflow, BothNetworksSkipUnderAStaticScaleOnOneRankToo) {
  EquivalenceSetup setup;
  setup.optimizer = "adam";
  setup.mixed.loss_scale.mode = LossScaleMode::kStatic;
  setup.mixed.loss_scale.init_scale = 256.0f;
  setup.mixed.inject_inf = InjectInf{/*step=*/2, /*rank=*/0, /*g=*/true, /*d=*/true};
  const TrainedParams solo = TrainMixedOnRanks(1, setup)[0];
  ExpectSkippedAtStepTwo(solo.g_steps, 256.0f, /*dynamic=*/false);
  ExpectSkippedAtStepTwo(solo.d_steps, 256.0f, /*dynamic=*/false);
}

}  // namespace
}  // namespace gantry
