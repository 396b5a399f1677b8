#include "worker/models/image_dcgan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/reshape.h"
#include "worker/models/gan_step.h"
#include "worker/models/normal_noise.h"

namespace gantry {

namespace {

constexpr int64_t kKernel = 4;

// The config, once its size and channels are ones the networks can be built for (the
// settings refuse the others by name before a model is made).
const ImageDcganConfig& Checked(const ImageDcganConfig& c) {
  CHECK(ImageDcganImageSizeProblem(c.image_size).empty()) << "image DCGAN size " << c.image_size;
  CHECK(c.channels >= 1 && c.channels <= ImageDcganConfig::kMaxChannels) << "image DCGAN channels " << c.channels;
  return c;
}

// BatchNorm with the activation after it, as one layer (the fused pass).
std::unique_ptr<Layer> BatchNormThen(int64_t channels, const ImageDcganConfig& c, Activation f, float slope) {
  return std::make_unique<BatchNorm>(channels, c.bn_eps, c.bn_momentum, FusedActivation{f, slope});
}

// The index of each module of examples/dcgan's nn.Sequential that holds parameters, in
// order: G is [ConvT, BN, ReLU] per block then [ConvT, Tanh]; D is [Conv, LeakyReLU],
// then [Conv, BN, LeakyReLU] per block, then [Conv, Sigmoid].
TorchNames SequentialNames(const std::vector<std::pair<int, bool>>& modules) {
  TorchNames names;
  for (const auto& [index, is_batch_norm] : modules) {
    const std::string prefix = absl::StrCat("main.", index);
    names.params.push_back(prefix + ".weight");
    if (is_batch_norm) {
      names.params.push_back(prefix + ".bias");
      names.buffers.push_back(prefix + ".running_mean");
      names.buffers.push_back(prefix + ".running_var");
    }
  }
  return names;
}

}  // namespace

Sequential MakeImageDcganGenerator(const ImageDcganConfig& c) {
  const std::vector<int64_t> widths = ImageDcganWidths(c.ngf, c.image_size);
  Sequential g;
  g.Add(std::make_unique<Reshape>(Shape{c.noise_dim, 1, 1}));
  g.Add(std::make_unique<ConvTranspose2d>(c.noise_dim, widths[0], kKernel, 1, 0, 0, /*bias=*/false));
  g.Add(BatchNormThen(widths[0], c, Activation::kRelu, 0.0f));
  for (size_t i = 1; i < widths.size(); ++i) {
    g.Add(std::make_unique<ConvTranspose2d>(widths[i - 1], widths[i], kKernel, 2, 1, 0, /*bias=*/false));
    g.Add(BatchNormThen(widths[i], c, Activation::kRelu, 0.0f));
  }
  g.Add(std::make_unique<ConvTranspose2d>(widths.back(), c.channels, kKernel, 2, 1, 0, /*bias=*/false));
  g.Add(MakeTanh());
  return g;
}

Sequential MakeImageDcganDiscriminator(const ImageDcganConfig& c) {
  std::vector<int64_t> widths = ImageDcganWidths(c.ndf, c.image_size);
  std::reverse(widths.begin(), widths.end());  // from the image end: ndf, 2 ndf, ...
  Sequential d;
  d.Add(std::make_unique<Conv2d>(c.channels, widths[0], kKernel, 2, 1, /*bias=*/false));
  d.Add(MakeLeakyRelu(c.leaky_slope));
  for (size_t i = 1; i < widths.size(); ++i) {
    d.Add(std::make_unique<Conv2d>(widths[i - 1], widths[i], kKernel, 2, 1, /*bias=*/false));
    d.Add(BatchNormThen(widths[i], c, Activation::kLeakyRelu, c.leaky_slope));
  }
  d.Add(std::make_unique<Conv2d>(widths.back(), 1, kKernel, 1, 0, /*bias=*/false));
  d.Add(std::make_unique<Flatten>());
  return d;
}

ImageDcgan::ImageDcgan(const ImageDcganConfig& config, Device device, const AugmentPolicy& augment)
    : config_(Checked(config)),
      augment_(augment),
      generator_(MakeImageDcganGenerator(config)),
      discriminator_(MakeImageDcganDiscriminator(config)) {
  g_params_ = std::make_unique<FlatParameters>(generator_.layers(), device);
  d_params_ = std::make_unique<FlatParameters>(discriminator_.layers(), device);
}

GanInputs ImageDcgan::StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                                 Device device) const {
  CHECK_EQ(rows.dim(0), end - begin) << "the data rows and the row range differ";
  return GanInputs{rows, NormalNoise(rng, global_rows, config_.noise_dim).Slice(begin, end).On(device), begin};
}

GanStepResult ImageDcgan::ComputeGradients(const Context& ctx, const GanInputs& inputs,
                                           const GanLossWeights& weights) {
  return ComputeGanGradients(ctx, *this, inputs.real, inputs.generator_input, weights, augment_,
                             inputs.gradients_ready);
}

Tensor ImageDcgan::SampleInputs(Rng& rng, int64_t count) const { return NormalNoise(rng, count, config_.noise_dim); }

TorchNames ImageDcgan::TorchStateDictNames(GanNetwork network) const {
  const int64_t blocks = static_cast<int64_t>(ImageDcganWidths(config_.ngf, config_.image_size).size());
  std::vector<std::pair<int, bool>> modules;  // (index in main, is a BatchNorm)
  if (network == GanNetwork::kGenerator) {
    for (int64_t b = 0; b < blocks; ++b) {
      modules.push_back({static_cast<int>(3 * b), false});
      modules.push_back({static_cast<int>(3 * b + 1), true});
    }
    modules.push_back({static_cast<int>(3 * blocks), false});
  } else {
    modules.push_back({0, false});
    for (int64_t b = 1; b < blocks; ++b) {
      modules.push_back({static_cast<int>(3 * b - 1), false});
      modules.push_back({static_cast<int>(3 * b), true});
    }
    modules.push_back({static_cast<int>(3 * blocks - 1), false});
  }
  return SequentialNames(modules);
}

}  // namespace gantry
