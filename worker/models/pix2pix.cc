#include "worker/models/pix2pix.h"

#include <string>

#include "worker/layers/concat.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/losses.h"
#include "worker/models/pix2pix_blocks.h"
#include "worker/models/residual_next_frame.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr int64_t kPatchKernel = 4;

void AddAll(Sequential& s, std::vector<std::unique_ptr<Layer>> layers) {
  for (auto& l : layers) s.Add(std::move(l));
}

// A convolution's weight (and bias) named "<module>.weight" ("<module>.bias").
void AddConv(TorchNames& names, const std::string& module, bool bias = false) {
  names.params.push_back(module + ".weight");
  if (bias) names.params.push_back(module + ".bias");
}

// A norm's tensors: BatchNorm has weight, bias and running statistics; InstanceNorm
// (no affine parameters, no running statistics) has none.
void AddNorm(TorchNames& names, const Pix2pixConfig& c, const std::string& module) {
  if (c.norm != NormKind::kBatch) return;
  names.params.push_back(module + ".weight");
  names.params.push_back(module + ".bias");
  names.buffers.push_back(module + ".running_mean");
  names.buffers.push_back(module + ".running_var");
}

// The U-Net as nn.Sequential blocks: down.i = (conv, [norm], LeakyReLU), up.j = (convT,
// norm, ReLU, [Dropout]), then `out`, the last transposed convolution.
TorchNames UNetNames(const Pix2pixConfig& c) {
  const int64_t n = UNetDepth(c.image_size);
  TorchNames names;
  for (int64_t i = 0; i < n; ++i) {
    const std::string block = "down." + std::to_string(i);
    AddConv(names, block + ".0");
    if (i > 0 && i < n - 1) AddNorm(names, c, block + ".1");
  }
  for (int64_t j = 0; j + 1 < n; ++j) {
    const std::string block = "up." + std::to_string(j);
    AddConv(names, block + ".0");
    AddNorm(names, c, block + ".1");
  }
  AddConv(names, "out", /*bias=*/true);
  return names;
}

// The PatchGAN as one nn.Sequential `net`: conv 0, LReLU 1, then (conv, norm, LReLU) at
// 2-4, 5-7 and 8-10, and the logit convolution 11.
TorchNames PatchGanNames(const Pix2pixConfig& c) {
  TorchNames names;
  AddConv(names, "net.0");
  for (int first : {2, 5, 8}) {
    AddConv(names, "net." + std::to_string(first));
    AddNorm(names, c, "net." + std::to_string(first + 1));
  }
  AddConv(names, "net.11", /*bias=*/true);
  return names;
}

}  // namespace

Sequential MakePix2pixGenerator(const Pix2pixConfig& config) {
  Sequential g;
  auto unet = std::make_unique<UNet>(config, Pix2pixConfig::kInputChannels, Pix2pixConfig::kOutputChannels);
  if (config.predict == NextFramePrediction::kDelta) {
    g.Add(std::make_unique<ResidualNextFrame>(std::move(unet)));
  } else {
    g.Add(std::move(unet));
  }
  return g;
}

Sequential MakePix2pixDiscriminator(const Pix2pixConfig& c) {
  const int64_t f1 = c.ndf, f2 = 2 * c.ndf, f3 = 4 * c.ndf, f4 = 8 * c.ndf;
  Sequential d;
  d.Add(std::make_unique<Conv2d>(kPix2pixRowChannels, f1, kPatchKernel, 2, 1, /*bias=*/false, LeakyRelu(c)));
  d.Add(std::make_unique<Conv2d>(f1, f2, kPatchKernel, 2, 1, /*bias=*/false));
  AddAll(d, NormThenActivation(c, f2, LeakyRelu(c)));
  d.Add(std::make_unique<Conv2d>(f2, f3, kPatchKernel, 2, 1, /*bias=*/false));
  AddAll(d, NormThenActivation(c, f3, LeakyRelu(c)));
  // The tutorial's ZeroPadding2D + 'valid' 4x4 convolutions: padding 1, stride 1.
  d.Add(std::make_unique<Conv2d>(f3, f4, kPatchKernel, 1, 1, /*bias=*/false));
  AddAll(d, NormThenActivation(c, f4, LeakyRelu(c)));
  d.Add(std::make_unique<Conv2d>(f4, 1, kPatchKernel, 1, 1, /*bias=*/true));
  return d;
}

int64_t PatchGanLogitSide(int64_t image_size) { return image_size / 8 - 2; }

Pix2pix::Pix2pix(const Pix2pixConfig& config, Device device)
    : config_(config),
      generator_(MakePix2pixGenerator(config)),
      discriminator_(MakePix2pixDiscriminator(config)),
      unrolled_(config.unroll.StepsAt(0)) {
  CHECK_GE(config.unroll.steps, 1) << "--unroll";
  Layer* first = generator_.layers()[0];
  Layer* unet = config.predict == NextFramePrediction::kDelta ? &static_cast<ResidualNextFrame*>(first)->inner() : first;
  unet_ = static_cast<UNet*>(unet);
  const std::vector<Layer*> g_layers = generator_.layers();
  const std::vector<Layer*> d_layers = discriminator_.layers();
  g_params_ = std::make_unique<FlatParameters>(g_layers, device);
  d_params_ = std::make_unique<FlatParameters>(d_layers, device);
}

Shape Pix2pix::SampleShape() const {
  const int64_t channels = Pix2pixConfig::kInputChannels + config_.unroll.steps * Pix2pixConfig::kOutputChannels;
  return Shape{channels, config_.image_size, config_.image_size};
}

Tensor Pix2pix::Channels(const Tensor& rows, int64_t first, int64_t count, Device device) const {
  const int64_t s = config_.image_size;
  CHECK(rows.rank() == 4 && rows.dim(1) >= first + count && rows.dim(2) == s && rows.dim(3) == s)
      << "pix2pix rows " << rows.shape().ToString() << " have no channels [" << first << ", " << first + count
      << ") of " << s << "x" << s;
  const int64_t plane = s * s, n = rows.dim(0), channels = rows.dim(1);
  Tensor out = Tensor::Uninitialized(Shape{n, count, s, s}, DType::kF32, device);
  for (int64_t i = 0; i < n; ++i) {
    out.ViewAt(i * count * plane, Shape{count * plane})
        .CopyFrom(rows.ViewAt((i * channels + first) * plane, Shape{count * plane}));
  }
  return out;
}

GanInputs Pix2pix::StepInputs(const Tensor& rows, Rng& /*rng*/, int64_t global_rows, int64_t begin, int64_t end,
                              Device device) const {
  CHECK_EQ(rows.dim(0), end - begin) << "the data rows and the row range differ";
  CHECK(0 <= begin && begin <= end && end <= global_rows) << "rows [" << begin << ", " << end << ") of " << global_rows;
  GanInputs in;
  in.generator_input = Channels(rows, 0, Pix2pixConfig::kInputChannels, device);
  in.real = Channels(rows, Pix2pixConfig::kInputChannels, config_.unroll.steps * Pix2pixConfig::kOutputChannels, device);
  in.row_offset = begin;
  return in;
}

GanStepResult Pix2pix::ComputeGradients(const Context& ctx, const GanInputs& inputs, const GanLossWeights& weights) {
  const Tensor& x = inputs.generator_input;
  CHECK_EQ(x.dim(0), inputs.real.dim(0)) << "condition and target batches differ";
  CHECK_EQ(inputs.real.dim(1), config_.unroll.steps * Pix2pixConfig::kOutputChannels) << "targets per row";
  if (unrolled_ > 1) return Unrolled(ctx, x, inputs.real, unrolled_, weights, inputs.gradients_ready);
  if (config_.unroll.steps == 1) return OneStep(ctx, x, inputs.real, weights, inputs.gradients_ready);
  // The curriculum's first epochs: the window's first target only.
  return OneStep(ctx, x, Channels(inputs.real, 0, Pix2pixConfig::kOutputChannels, inputs.real.device()), weights,
                 inputs.gradients_ready);
}

GanStepResult Pix2pix::OneStep(const Context& ctx, const Tensor& x, const Tensor& y, const GanLossWeights& weights,
                               const GanGradientHooks& hooks) {
  Sequential& g = generator_;
  Sequential& d = discriminator_;
  g_params_->ZeroGrads();
  d_params_->ZeroGrads();
  const ConcatChannels concat;

  Context real_ctx = ctx, fake_ctx = ctx;  // D has no dropout; distinct streams regardless
  real_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x7265616cull);  // "real"
  fake_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x66616b65ull);  // "fake"

  GanStepResult r;
  SequentialCache g_cache, d_real_cache, d_fake_cache;
  r.fake = g.Forward(ctx, x, &g_cache);
  r.real_logits = d.Forward(real_ctx, concat.Forward(ctx, x, y), &d_real_cache);
  r.fake_logits = d.Forward(fake_ctx, concat.Forward(ctx, x, r.fake), &d_fake_cache);

  // Generator tape first (as in gan_step.cc: G's gradients are final before D's
  // weight-gradient passes, so an overlapped exchange sends them meanwhile; no value
  // changes): the GAN term through D (input gradient only; the condition's part is
  // dropped), plus l1_weight times the L1 term, into G.
  const LossResult d_real = WeightedBceWithLogitsLoss(ctx, r.real_logits, 1.0f, 0.5f * weights.d);
  const LossResult d_fake = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 0.0f, 0.5f * weights.d);
  const LossResult g_fool = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 1.0f, weights.g);
  Context no_param_grads = fake_ctx;
  no_param_grads.param_grads = false;
  const Tensor d_pair = d.Backward(no_param_grads, g_fool.grad, d_fake_cache, /*want_input_grad=*/true);
  const Tensor d_fake_image = concat.Backward(ctx, d_pair, Pix2pixConfig::kInputChannels).second;
  const LossResult l1 = L1Loss(ctx, r.fake, y);
  ctx.backend->Axpy(l1.grad.numel(), config_.l1_weight * weights.g, l1.grad.data(), d_fake_image.data());
  Context g_ctx = ctx;
  g_ctx.gradients_ready = hooks.generator;
  g.Backward(g_ctx, d_fake_image, g_cache, /*want_input_grad=*/false);

  // Discriminator tape: the halved sum of both BCE terms; the fake pass is D's last.
  d.Backward(real_ctx, d_real.grad, d_real_cache, /*want_input_grad=*/false);
  Context d_last_ctx = fake_ctx;
  d_last_ctx.gradients_ready = hooks.discriminator;
  d.Backward(d_last_ctx, d_fake.grad, d_fake_cache, /*want_input_grad=*/false);

  r.d_loss = 0.5 * (d_real.loss + d_fake.loss);
  r.g_loss = g_fool.loss + config_.l1_weight * l1.loss;
  return r;
}

Tensor Pix2pix::SampleInputs(Rng& /*rng*/, int64_t /*count*/) const {
  CHECK(false) << "pix2pix samples come from fixed data rows: call SampleInputsFromRows (SamplesFromData)";
  return Tensor();
}

TorchNames Pix2pix::TorchStateDictNames(GanNetwork network) const {
  return network == GanNetwork::kGenerator ? UNetNames(config_) : PatchGanNames(config_);
}

Tensor Pix2pix::SampleInputsFromRows(const Tensor& rows) const {
  return Channels(rows.On(Device::kCpu), 0, Pix2pixConfig::kInputChannels, Device::kCpu);
}

}  // namespace gantry
