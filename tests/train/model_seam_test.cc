// The training path talks to a GanModel, not to the DCGAN: a model the trainer has never
// heard of trains data-parallel through DataParallelStep and BroadcastModel, and
// checkpoints record which model saved them.
#include <memory>
#include <mutex>

#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/training_fixtures.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_format.h"
#include "worker/checkpoint/checkpoint_match.h"
#include "worker/comm/local_communicator.h"
#include "worker/layers/activation.h"
#include "worker/layers/linear.h"
#include "worker/models/gan_step.h"
#include "worker/models/normal_noise.h"
#include "worker/optim/optimizer.h"
#include "worker/train/data_parallel_step.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

// G: noise[2] -> Linear -> tanh -> row[4]; D: row[4] -> Linear -> logit. No BatchNorm, so
// any split of a batch gives the same gradient sum.
class TinyGan final : public GanModel {
 public:
  TinyGan() {
    generator_.Add(std::make_unique<Linear>(2, 4, /*bias=*/true)).Add(MakeTanh());
    discriminator_.Add(std::make_unique<Linear>(4, 1, /*bias=*/true));
    const std::vector<Layer*> g = generator_.layers(), d = discriminator_.layers();
    g_params_ = std::make_unique<FlatParameters>(g);
    d_params_ = std::make_unique<FlatParameters>(d);
  }
  std::string name() const override { return "tiny"; }
  Sequential& generator() override { return generator_; }
  Sequential& discriminator() override { return discriminator_; }
  FlatParameters& g_params() override { return *g_params_; }
  FlatParameters& d_params() override { return *d_params_; }
  Shape SampleShape() const override { return Shape{4}; }
  GanInputs StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                       Device device) const override {
    return GanInputs{rows, NormalNoise(rng, global_rows, 2).Slice(begin, end).On(device), begin};
  }
  GanStepResult ComputeGradients(const Context& ctx, const GanInputs& in, const GanLossWeights& w) override {
    return ComputeGanGradients(ctx, *this, in.real, in.generator_input, w);
  }
  Tensor SampleInputs(Rng& rng, int64_t count) const override { return NormalNoise(rng, count, 2); }

 private:
  Sequential generator_, discriminator_;
  std::unique_ptr<FlatParameters> g_params_, d_params_;
};

constexpr int64_t kGlobalBatch = 6;

Tensor DataRows(int64_t begin, int64_t end) {
  Rng rng(99);
  Tensor all = Tensor::Zeros(Shape{kGlobalBatch, 4});
  for (int64_t i = 0; i < all.numel(); ++i) all.data()[i] = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  return all.Slice(begin, end).On(Device::kCpu);
}

std::vector<float> Values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

// Three SGD steps of TinyGan on `comm`'s share of each global batch; G's then D's
// parameters afterwards. Rank != 0 starts from other weights, which the broadcast replaces.
absl::StatusOr<std::vector<float>> TrainTiny(Communicator& comm) {
  TinyGan model;
  model.Initialize(InitScheme::kGlorotUniform, comm.rank() == 0 ? 5 : 77);
  const CommOptions opts{30.0};
  RETURN_IF_ERROR(BroadcastModel(comm, model, opts));
  OptimizerConfig oc;
  oc.kind = "sgd";
  oc.lr = 0.1f;
  auto g_opt = MakeOptimizer(oc, model.g_params().num_params());
  auto d_opt = MakeOptimizer(oc, model.d_params().num_params());
  if (!g_opt.ok() || !d_opt.ok()) return absl::InternalError("optimizer");
  DataParallelStep step(model, **g_opt, **d_opt, comm, CpuBackend(), opts, /*sync_bn=*/false, Clock::Real());
  const int64_t begin = comm.rank() * kGlobalBatch / comm.size();
  const int64_t end = (comm.rank() + 1) * kGlobalBatch / comm.size();
  Rng noise(3);
  for (int s = 0; s < 3; ++s) {
    const GanInputs in = model.StepInputs(DataRows(begin, end), noise, kGlobalBatch, begin, end, Device::kCpu);
    ASSIGN_OR_RETURN(const DataParallelStepResult r, step.Run(in, kGlobalBatch, /*dropout_seed=*/s));
    if (!r.g_stepped || !r.d_stepped) return absl::InternalError("a step was skipped");
  }
  std::vector<float> out = Values(model.g_params().params());
  const std::vector<float> d = Values(model.d_params().params());
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

TEST(ModelSeam, AnotherGanTrainsDataParallelLikeOneProcess) {
  absl::StatusOr<std::vector<float>> alone;
  ASSERT_TRUE(RunRanks(1, [&](Communicator& comm) {
                alone = TrainTiny(comm);
                return alone.status();
              }).ok());
  std::vector<std::vector<float>> ranks(2);
  std::mutex mu;
  const absl::Status status = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<float> p, TrainTiny(comm));
    std::lock_guard<std::mutex> lock(mu);
    ranks[static_cast<size_t>(comm.rank())] = std::move(p);
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(ranks[0], ranks[1]) << "replicas drifted apart";
  ASSERT_EQ(ranks[0].size(), alone->size());
  for (size_t i = 0; i < alone->size(); ++i) EXPECT_NEAR(ranks[0][i], (*alone)[i], 1e-5f) << "parameter " << i;
}

TEST(ModelSeam, CheckpointsNameTheirModel) {
  const TrainConfig config = testing::QuickRunConfig(testing::FreshTestDir("model_seam"));
  const ImageDataset data = testing::TinyImages(8);
  TrainingState state = testing::FreshState(config, data);
  EXPECT_EQ(state.model, "dcgan");
  absl::StatusOr<TrainingState> decoded = DecodeCheckpoint(EncodeCheckpoint(state), "ckpt-0.bin");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->model, "dcgan");

  state.model = "pix2pix";
  decoded = DecodeCheckpoint(EncodeCheckpoint(state), "ckpt-0.bin");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->model, "pix2pix");
  const absl::Status refused = CheckMatchesRun(*decoded, ExpectationsFor(config, data.count), "ckpt-0.bin");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("ckpt-0.bin: saved by a run of --model pix2pix"));
}

TEST(ModelSeam, CheckpointsFromBeforeModelsWereNamedLoadAsDcgan) {
  const TrainConfig config = testing::QuickRunConfig(testing::FreshTestDir("model_seam_old"));
  const ImageDataset data = testing::TinyImages(8);
  TrainingState state = testing::FreshState(config, data);
  state.model = "not-written";
  const std::vector<uint8_t> bytes = EncodeCheckpoint(state);
  // Re-frame the sections without the model section, as a checkpoint of the last release.
  absl::StatusOr<std::vector<SectionView>> views = UnframeCheckpoint(bytes, "new");
  ASSERT_TRUE(views.ok()) << views.status();
  std::vector<SectionBytes> old_sections;
  for (const SectionView& v : *views) {
    if (v.tag != SectionTag::kModel) old_sections.push_back({v.tag, {v.bytes.begin(), v.bytes.end()}});
  }
  ASSERT_EQ(old_sections.size() + 1, views->size());
  const absl::StatusOr<TrainingState> decoded = DecodeCheckpoint(FrameCheckpoint(old_sections), "ckpt-old.bin");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->model, "dcgan");
  EXPECT_TRUE(CheckMatchesRun(*decoded, ExpectationsFor(config, data.count), "ckpt-old.bin").ok());
}

}  // namespace
}  // namespace gantry
