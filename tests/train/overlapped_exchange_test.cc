// The overlapped gradient exchange: how gradients are cut into buckets, and that sending
// them during backward changes no bit of training (thread ranks; the mpirun check
// mpi_equivalence_check does the same over MPI; its thread: tests/comm/collective_thread_test.cc).

#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/train/equivalence_harness.h"
#include "worker/comm/local_communicator.h"
#include "worker/models/dcgan.h"
#include "worker/train/gradient_buckets.h"

namespace gantry {
namespace {

using testing::EquivalenceSetup;
using testing::TrainedParams;

constexpr double kValuesPerMb = 1e6 / sizeof(float);

TEST(GradientBuckets, WholeLayersInReverseOrderWithASmallFirstBucket) {
  // Layers of 100k, 300k, 50k, 200k and 10k values.
  const std::vector<int64_t> offsets = {0, 100000, 400000, 450000, 650000, 660000};
  const std::vector<GradientBucket> buckets = PlanGradientBuckets(offsets, {.bucket_mb = 1, .first_mb = 0.5});
  // First cap 125k values: layer 4 alone (layer 3 would take it to 210k); then cap 250k:
  // layers 3 and 2 (250k), layer 1 alone, layer 0 alone.
  const std::vector<std::tuple<int64_t, int64_t, size_t>> want = {
      {650000, 660000, 4}, {400000, 650000, 2}, {100000, 400000, 1}, {0, 100000, 0}};
  ASSERT_EQ(buckets.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::make_tuple(buckets[i].begin, buckets[i].end, buckets[i].first_layer), want[i]) << "bucket " << i;
  }
}

TEST(GradientBuckets, CoverEveryValueOnceWithoutEmptyBuckets) {
  const std::vector<int64_t> offsets = {0, 0, 7, 7, 7, 1000, 1000};  // layers without parameters too
  for (double mb : {1e-6, 1e-5, 1e-3, 100.0}) {
    SCOPED_TRACE(mb);
    const std::vector<GradientBucket> buckets = PlanGradientBuckets(offsets, {.bucket_mb = mb, .first_mb = mb});
    int64_t end = offsets.back();
    for (const GradientBucket& b : buckets) {
      EXPECT_EQ(b.end, end);
      EXPECT_GT(b.size(), 0);
      EXPECT_EQ(b.begin, offsets[b.first_layer]);
      end = b.begin;
    }
    EXPECT_EQ(end, 0);
  }
  EXPECT_EQ(PlanGradientBuckets(offsets, {.bucket_mb = 100, .first_mb = 100}).size(), 1u);
}

TEST(GradientBuckets, TheDcganGeneratorSplitsAtItsLayers) {
  Dcgan model(DcganConfig{}, Device::kCpu);
  const std::vector<int64_t>& offsets = model.g_params().layer_param_offsets();
  ASSERT_EQ(offsets.back(), model.g_params().num_params());
  const std::vector<GradientBucket> buckets = PlanGradientBuckets(offsets, {.bucket_mb = 4, .first_mb = 1});
  EXPECT_GE(buckets.size(), 3u) << "the generator's 9 MB should not travel as one or two buckets";
  for (size_t i = 0; i < buckets.size(); ++i) {
    // Within its cap, unless it is one layer larger than the cap.
    const double cap = (i == 0 ? 1.0 : 4.0) * kValuesPerMb;
    const bool one_layer = buckets[i].end == offsets[buckets[i].first_layer + 1];
    EXPECT_TRUE(static_cast<double>(buckets[i].size()) <= cap || one_layer) << "bucket " << i;
  }
}

// Small buckets, so that every network travels in several and most are sent mid-backward.
constexpr BucketCaps kSmallBuckets{.bucket_mb = 0.2, .first_mb = 0.01};

std::vector<TrainedParams> Train(int ranks, const EquivalenceSetup& setup) {
  absl::StatusOr<std::vector<TrainedParams>> out = testing::TrainOnThreadRanks(ranks, setup);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<TrainedParams>(static_cast<size_t>(ranks));
}

void ExpectBitIdentical(const std::vector<TrainedParams>& a, const std::vector<TrainedParams>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].g, b[r].g) << "rank " << r << ": G differs";
    EXPECT_EQ(a[r].d, b[r].d) << "rank " << r << ": D differs";
    EXPECT_EQ(a[r].g_buffers, b[r].g_buffers) << "rank " << r << ": G's BatchNorm statistics differ";
  }
}

class OverlapTest : public ::testing::TestWithParam<WireDtype> {};

// Adam with dynamic loss scaling over the test's wire.
EquivalenceSetup ScaledAdam(WireDtype wire) {
  EquivalenceSetup setup;
  setup.optimizer = "adam";
  setup.mixed.allreduce_dtype = wire;
  setup.mixed.loss_scale.mode = LossScaleMode::kDynamic;
  setup.mixed.loss_scale.init_scale = 1024.0f;
  return setup;
}

TEST_P(OverlapTest, OverlappedTrainingIsBitIdenticalToTheExchangeAfterBackward) {
  const EquivalenceSetup plain = ScaledAdam(GetParam());
  EquivalenceSetup overlapped = plain;
  overlapped.overlap = kSmallBuckets;
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(absl::StrCat(ranks, " ranks"));
    const std::vector<TrainedParams> a = Train(ranks, plain);
    const std::vector<TrainedParams> b = Train(ranks, overlapped);
    ExpectBitIdentical(a, b);
    EXPECT_NE(b[0].g, b[0].initial_g) << "nothing trained";
  }
}

// --overlap auto's trial alternates the two exchanges step by step, then keeps one: the
// same training, bit for bit, as either alone.
TEST_P(OverlapTest, SwitchingBetweenTheExchangesStepByStepChangesNothing) {
  EquivalenceSetup plain = ScaledAdam(GetParam());
  plain.steps = 5;
  EquivalenceSetup switching = plain;
  switching.overlap = kSmallBuckets;
  switching.overlapped_at = [](int step) { return step % 2 == 1; };
  const std::vector<TrainedParams> a = Train(2, plain);
  const std::vector<TrainedParams> b = Train(2, switching);
  ExpectBitIdentical(a, b);
  EXPECT_NE(b[0].g, b[0].initial_g) << "nothing trained";
}

TEST_P(OverlapTest, AForcedOverflowStillSkipsOnEveryRank) {
  EquivalenceSetup plain = ScaledAdam(GetParam());
  plain.mixed.inject_inf = InjectInf{/*step=*/2, /*rank=*/1, /*g=*/true, /*d=*/true};
  EquivalenceSetup overlapped = plain;
  overlapped.overlap = kSmallBuckets;
  const std::vector<TrainedParams> a = Train(2, plain);
  const std::vector<TrainedParams> b = Train(2, overlapped);
  ExpectBitIdentical(a, b);
  for (const TrainedParams& p : b) {
    EXPECT_FALSE(p.g_steps[1].stepped);
    EXPECT_FALSE(p.d_steps[1].stepped);
    EXPECT_TRUE(p.d_steps[2].stepped);
  }
}

INSTANTIATE_TEST_SUITE_P(Wires, OverlapTest, ::testing::Values(WireDtype::kFp32, WireDtype::kBf16),
                         [](const auto& info) { return WireDtypeName(info.param); });

}  // namespace
}  // namespace gantry
