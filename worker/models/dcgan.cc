#include "worker/models/dcgan.h"

#include <optional>

#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/dropout.h"
#include "worker/layers/linear.h"
#include "worker/layers/reshape.h"
#include "worker/models/gan_step.h"
#include "worker/models/normal_noise.h"
#include "worker/tensor/random.h"

namespace gantry {

namespace {

// The LeakyReLU the layer before it absorbs when fusing, else none.
std::optional<FusedActivation> Fused(const DcganConfig& c) {
  if (!c.fuse_activations) return std::nullopt;
  return FusedActivation{Activation::kLeakyRelu, c.leaky_slope};
}

// BatchNorm followed by LeakyReLU: one layer when fused, two otherwise.
void AddBatchNormLeakyRelu(Sequential& s, int64_t channels, const DcganConfig& c) {
  s.Add(std::make_unique<BatchNorm>(channels, c.bn_eps, c.bn_momentum, Fused(c)));
  if (!c.fuse_activations) s.Add(MakeLeakyRelu(c.leaky_slope));
}

// Conv2d (with bias) followed by LeakyReLU: one layer when fused, two otherwise.
void AddConvLeakyRelu(Sequential& s, int64_t in, int64_t out, const DcganConfig& c) {
  s.Add(std::make_unique<Conv2d>(in, out, 5, 2, 2, /*bias=*/true, Fused(c)));
  if (!c.fuse_activations) s.Add(MakeLeakyRelu(c.leaky_slope));
}

}  // namespace

Sequential MakeDcganGenerator(const DcganConfig& c) {
  Sequential g;
  g.Add(std::make_unique<Linear>(c.noise_dim, 7 * 7 * 256, /*bias=*/false));
  AddBatchNormLeakyRelu(g, 7 * 7 * 256, c);
  g.Add(std::make_unique<Reshape>(Shape{256, 7, 7}));
  g.Add(std::make_unique<ConvTranspose2d>(256, 128, 5, 1, 2, 0, /*bias=*/false));
  AddBatchNormLeakyRelu(g, 128, c);
  g.Add(std::make_unique<ConvTranspose2d>(128, 64, 5, 2, 2, 1, /*bias=*/false));
  AddBatchNormLeakyRelu(g, 64, c);
  g.Add(std::make_unique<ConvTranspose2d>(64, 1, 5, 2, 2, 1, /*bias=*/false)).Add(MakeTanh());
  return g;
}

Sequential MakeDcganDiscriminator(const DcganConfig& c) {
  Sequential d;
  AddConvLeakyRelu(d, 1, 64, c);
  d.Add(std::make_unique<Dropout>(c.dropout));
  AddConvLeakyRelu(d, 64, 128, c);
  d.Add(std::make_unique<Dropout>(c.dropout))
      .Add(std::make_unique<Flatten>())
      .Add(std::make_unique<Linear>(128 * 7 * 7, 1, /*bias=*/true));
  return d;
}

Dcgan::Dcgan(const DcganConfig& config, Device device, const AugmentPolicy& augment)
    : config_(config),
      augment_(augment),
      generator_(MakeDcganGenerator(config)),
      discriminator_(MakeDcganDiscriminator(config)) {
  const std::vector<Layer*> g_layers = generator_.layers();
  const std::vector<Layer*> d_layers = discriminator_.layers();
  g_params_ = std::make_unique<FlatParameters>(g_layers, device);
  d_params_ = std::make_unique<FlatParameters>(d_layers, device);
  CHECK_EQ(g_params_->num_params(), kDcganGeneratorParams);
  CHECK_EQ(d_params_->num_params(), kDcganDiscriminatorParams);
}

GanInputs Dcgan::StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                            Device device) const {
  CHECK_EQ(rows.dim(0), end - begin) << "the data rows and the row range differ";
  return GanInputs{rows, NormalNoise(rng, global_rows, config_.noise_dim).Slice(begin, end).On(device), begin};
}

GanStepResult Dcgan::ComputeGradients(const Context& ctx, const GanInputs& inputs, const GanLossWeights& weights) {
  return ComputeGanGradients(ctx, *this, inputs.real, inputs.generator_input, weights, augment_,
                             inputs.gradients_ready);
}

Tensor Dcgan::SampleInputs(Rng& rng, int64_t count) const { return NormalNoise(rng, count, config_.noise_dim); }

TorchNames Dcgan::TorchStateDictNames(GanNetwork network) const {
  if (network == GanNetwork::kDiscriminator) {
    return {.params = {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias"}};
  }
  // G: fc, then each BatchNorm's weight and bias (and running statistics) and each
  // transposed convolution's weight, in forward order.
  TorchNames g{.params = {"fc.weight"}};
  for (const char* layer : {"bn0", "deconv1", "bn1", "deconv2", "bn2", "deconv3"}) {
    const std::string prefix(layer);
    if (prefix.starts_with("bn")) {
      g.params.push_back(prefix + ".weight");
      g.params.push_back(prefix + ".bias");
      g.buffers.push_back(prefix + ".running_mean");
      g.buffers.push_back(prefix + ".running_var");
    } else {
      g.params.push_back(prefix + ".weight");
    }
  }
  return g;
}

}  // namespace gantry
