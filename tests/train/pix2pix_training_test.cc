// Pix2Pix through the training machinery that exists for every GanModel: a data-parallel
// step on 2 thread-ranks (sync-BN; even and uneven shares) makes the update of 1 rank,
// and a checkpoint round trip keeps the model's name, layout and values.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>

#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/training_fixtures.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_match.h"
#include "worker/comm/local_communicator.h"
#include "worker/models/pix2pix.h"
#include "worker/optim/optimizer.h"
#include "worker/train/data_parallel_step.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kPix2PixGlobalBatch = 4;
constexpr int kSteps = 3;

Pix2pixConfig SmallConfig() {
  Pix2pixConfig c;
  c.image_size = 32;
  c.ngf = 8;
  c.ndf = 8;
  // Dropout masks are drawn per rank from each element's index in the rank's tensor, so
  // with dropout on a split batch would see other masks (as the DCGAN's D would).
  c.dropout = 0.0f;
  return c;
}

struct Trained {
  std::vector<float> g, d, g_buffers, d_buffers;
};

// Rows [kPix2PixGlobalBatch, 7, 32, 32] uniform in [-1, 1], a new set per step.
Tensor GlobalRows(uint64_t seed) {
  Tensor t = Tensor::Zeros(Shape{kPix2PixGlobalBatch, 7, 32, 32});
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  return t;
}

std::vector<float> Pix2PixValues(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

// kSteps SGD steps on this rank's share of each global batch of synthetic rows.
// overlap: the exchange overlaps backward in buckets of these caps (pix2pix: G, one
// top-level layer, travels as one bucket; D's convolutions in several).
absl::StatusOr<Trained> Train(Communicator& comm, const std::vector<int64_t>& shares,
                              std::optional<BucketCaps> overlap = std::nullopt) {
  Pix2pix model(SmallConfig());
  model.Initialize(InitScheme::kNormal002, comm.rank() == 0 ? 5 : 77);  // the broadcast replaces rank 1's
  const CommOptions opts{30.0};
  RETURN_IF_ERROR(BroadcastModel(comm, model, opts));
  OptimizerConfig oc;
  oc.kind = "sgd";
  oc.lr = 0.05f;
  auto g_opt = MakeOptimizer(oc, model.g_params().num_params());
  auto d_opt = MakeOptimizer(oc, model.d_params().num_params());
  if (!g_opt.ok() || !d_opt.ok()) return absl::InternalError("optimizer");
  DataParallelStep step(model, **g_opt, **d_opt, comm, CpuBackend(), opts, /*sync_bn=*/true, Clock::Real());
  if (overlap) RETURN_IF_ERROR(step.EnableOverlap(*overlap));
  int64_t begin = 0;
  for (int r = 0; r < comm.rank(); ++r) begin += shares[static_cast<size_t>(r)];
  const int64_t end = begin + shares[static_cast<size_t>(comm.rank())];
  Rng rng(3);
  for (int s = 0; s < kSteps; ++s) {
    const Tensor rows = GlobalRows(100 + static_cast<uint64_t>(s)).Slice(begin, end);
    const GanInputs in = model.StepInputs(rows, rng, kPix2PixGlobalBatch, begin, end, Device::kCpu);
    ASSIGN_OR_RETURN(const DataParallelStepResult r, step.Run(in, kPix2PixGlobalBatch, /*dropout_seed=*/s));
    if (!r.g_stepped || !r.d_stepped) return absl::InternalError("a step was skipped");
  }
  return Trained{Pix2PixValues(model.g_params().params()), Pix2PixValues(model.d_params().params()),
                 Pix2PixValues(model.g_params().buffers()), Pix2PixValues(model.d_params().buffers())};
}

double MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

void ExpectRanksMatchOneRank(const std::vector<int64_t>& shares) {
  absl::StatusOr<Trained> alone;
  ASSERT_TRUE(RunRanks(1, [&](Communicator& comm) {
                alone = Train(comm, {kPix2PixGlobalBatch});
                return alone.status();
              }).ok());
  ASSERT_TRUE(alone.ok()) << alone.status();
  std::vector<Trained> ranks(2);
  std::mutex mu;
  const absl::Status status = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    ASSIGN_OR_RETURN(Trained t, Train(comm, shares));
    std::lock_guard<std::mutex> lock(mu);
    ranks[static_cast<size_t>(comm.rank())] = std::move(t);
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ranks[0].g, ranks[1].g) << "replicas drifted apart";
  EXPECT_EQ(ranks[0].d, ranks[1].d) << "replicas drifted apart";
  // fp32 sums in other orders over 3 steps (weights ~0.02-1, SGD steps ~1e-3): a wrong
  // loss weight or a missing sync-BN term moves parameters by >= 1e-4.
  EXPECT_LT(MaxDiff(ranks[0].g, alone->g), 2e-6);
  EXPECT_LT(MaxDiff(ranks[0].d, alone->d), 2e-6);
  EXPECT_LT(MaxDiff(ranks[0].g_buffers, alone->g_buffers), 2e-6) << "G running statistics";
  EXPECT_LT(MaxDiff(ranks[0].d_buffers, alone->d_buffers), 2e-6) << "D running statistics";
}

TEST(Pix2pixTraining, TwoRanksWithSyncBnEqualOneRank) { ExpectRanksMatchOneRank({2, 2}); }

// A rank holding a single row: the case the bottleneck decision is about.
TEST(Pix2pixTraining, UnevenSharesWithOneRowOnARankEqualOneRank) { ExpectRanksMatchOneRank({3, 1}); }

TEST(Pix2pixTraining, OverlappedExchangeIsBitIdenticalToTheExchangeAfterBackward) {
  std::vector<Trained> plain(2), overlapped(2);
  std::mutex mu;
  for (bool overlap : {false, true}) {
    std::vector<Trained>& out = overlap ? overlapped : plain;
    const absl::Status status = RunRanks(2, [&](Communicator& comm) -> absl::Status {
      ASSIGN_OR_RETURN(Trained t, Train(comm, {3, 1}, overlap ? std::optional<BucketCaps>(BucketCaps{
                                                                    .bucket_mb = 0.05, .first_mb = 0.01})
                                                              : std::nullopt));
      std::lock_guard<std::mutex> lock(mu);
      out[static_cast<size_t>(comm.rank())] = std::move(t);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(plain[r].g, overlapped[r].g) << "rank " << r;
    EXPECT_EQ(plain[r].d, overlapped[r].d) << "rank " << r;
    EXPECT_EQ(plain[r].d_buffers, overlapped[r].d_buffers) << "rank " << r;
  }
}

TEST(Pix2pixTraining, CheckpointRoundTripKeepsTheModel) {
  TrainConfig config = testing::QuickRunConfig(testing::FreshTestDir("pix2pix_ckpt"));
  config.model = "pix2pix";
  config.pix2pix = SmallConfig();
  const ImageDataset data = testing::TinyImages(8);
  const TrainingState state = testing::FreshState(config, data);
  EXPECT_EQ(state.model, "pix2pix");
  absl::StatusOr<TrainingState> decoded = DecodeCheckpoint(EncodeCheckpoint(state), "ckpt-1.bin");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->model, "pix2pix");
  EXPECT_TRUE(*decoded == state) << "the round trip changed the state";
  EXPECT_TRUE(testing::SameBits(decoded->g.params, state.g.params));
  EXPECT_TRUE(decoded->g.param_layout.front().name.find("unet.down0") != std::string::npos)
      << decoded->g.param_layout.front().name;
  EXPECT_TRUE(CheckMatchesRun(*decoded, ExpectationsFor(config, data.count), "ckpt-1.bin").ok());

  TrainConfig dcgan = config;
  dcgan.model = "dcgan";
  const absl::Status refused = CheckMatchesRun(*decoded, ExpectationsFor(dcgan, data.count), "ckpt-1.bin");
  EXPECT_THAT(refused.message(), HasSubstr("saved by a run of --model pix2pix"));
  TrainConfig other_size = config;
  other_size.pix2pix.ngf = 16;
  EXPECT_FALSE(CheckMatchesRun(*decoded, ExpectationsFor(other_size, data.count), "ckpt-1.bin").ok())
      << "a checkpoint of another U-Net width must not load";
}

}  // namespace
}  // namespace gantry
