#include "tests/infer/tile_net_harness.h"

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"
#include "worker/infer/tile_assignment.h"
#include "worker/infer/tile_blend.h"
#include "worker/infer/tile_plan.h"
#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry::testing {

struct TileNet::Impl {
  Sequential net;
  std::unique_ptr<FlatParameters> params;
};

TileNet::TileNet(uint64_t seed) : impl_(std::make_unique<Impl>()) {
  impl_->net.Add(std::make_unique<Conv2d>(4, 8, 3, 1, 1, /*bias=*/false));
  impl_->net.Add(std::make_unique<BatchNorm>(8));
  impl_->net.Add(std::make_unique<Conv2d>(8, 3, 3, 1, 1, /*bias=*/true));
  impl_->net.Add(MakeTanh());
  const std::vector<Layer*> layers = impl_->net.layers();
  impl_->params = std::make_unique<FlatParameters>(layers);
  Rng rng(seed);
  impl_->params->Initialize(InitScheme::kNormal002, rng);
  // Running statistics away from (0, 1), so eval mode visibly uses them.
  const Tensor& buffers = impl_->params->buffers();
  for (int64_t i = 0; i < buffers.numel(); ++i) buffers.data()[i] = 0.5f + static_cast<float>(rng.Uniform());
  // Larger weights than N(0, 0.02), so the output is not near zero.
  const Tensor& p = impl_->params->params();
  for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = static_cast<float>(rng.Uniform() - 0.5);
}

TileNet::~TileNet() = default;

TileFunction TileNet::Function() {
  return [this](const std::vector<float>& in, int64_t batch, std::vector<float>& out) -> absl::Status {
    const int64_t s = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(in.size() / (batch * 4)))));
    Context ctx;
    ctx.training = false;
    SequentialCache cache;
    const Tensor y = impl_->net.Forward(ctx, Tensor::FromVector(Shape{batch, 4, s, s}, in), &cache);
    std::copy_n(y.data(), y.numel(), out.begin());
    return absl::OkStatus();
  };
}

std::vector<float> TestField(int64_t height, int64_t width, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> f(4 * height * width);
  for (float& v : f) v = static_cast<float>(2 * rng.Uniform() - 1);
  for (int64_t i = 3 * height * width; i < 4 * height * width; ++i) f[i] = f[i] > 0.8f ? 1.0f : 0.0f;  // the "mask"
  return f;
}

absl::StatusOr<std::vector<float>> RunTiledSteps(Communicator& comm, int64_t height, int64_t width, int64_t tile,
                                                 int64_t overlap, const char* blend, int64_t group_size,
                                                 int64_t batch, int steps) {
  ASSIGN_OR_RETURN(const TilePlan plan, PlanTiles(height, width, tile, overlap));
  ASSIGN_OR_RETURN(const BlendMode mode, ParseBlendMode(blend));
  const TileBlender blender(plan, mode);
  const TileAssignment assignment = AssignTiles(plan.count(), group_size, comm.size());
  TileNet net(11);
  std::vector<float> field = TestField(height, width, 5);
  const int64_t plane = height * width;
  TiledStepOptions options{.in_channels = 4, .out_channels = 3, .batch = batch, .comm = {.timeout_seconds = 60}};
  for (int step = 0; step < steps; ++step) {
    ASSIGN_OR_RETURN(std::vector<float> next, TiledMapReduce(comm, blender, assignment, field.data(), options,
                                                             net.Function()));
    std::copy(next.begin(), next.end(), field.begin());  // channels 0-2; the mask stays
  }
  return std::vector<float>(field.begin(), field.begin() + 3 * plane);
}

}  // namespace gantry::testing
