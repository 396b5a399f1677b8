// The DCGAN of Radford, Metz and Chintala (2016) for square images of 32, 64 or 128 px with
// 1-4 channels, as PyTorch's examples/dcgan builds it at 64 px (ngf = ndf = 64, nz = 100):
//
//   G: z[N,100] -> [N,100,1,1] -> ConvT 4x4 s1 p0 -> 512x4x4 -> BN -> ReLU
//      -> ConvT 4x4 s2 p1 -> 256x8x8 -> BN -> ReLU -> ... -> 64x32x32 -> BN -> ReLU
//      -> ConvT 4x4 s2 p1 -> Cx64x64 -> Tanh
//   D: x[N,C,64,64] -> Conv 4x4 s2 p1 -> 64x32x32 -> LeakyReLU(0.2)
//      -> Conv 4x4 s2 p1 -> 128x16x16 -> BN -> LeakyReLU -> ... -> 512x4x4 -> BN -> LeakyReLU
//      -> Conv 4x4 s1 p0 -> 1x1x1 -> Flatten (a logit; PyTorch's Sigmoid is in the loss)
//
// No convolution has a bias (BatchNorm follows each but D's first and the outputs). The
// depth follows the image: log2(S/4) stride-2 blocks in each network, so 32 px has one
// block fewer and 128 px one more than 64 px; filters double from ngf (ndf) per block up
// to 8x and then stay (a 128-px network's two widest blocks both have 8x). Each network's
// parameters live in one flat buffer in PyTorch's parameters() order for the twin in
// bench/torch/image_dcgan_model.py, whose module names (main.0, main.1, ...) are
// examples/dcgan's, so that script's state_dicts load as they are.
#pragma once

#include <cstdint>
#include <memory>

#include "runspec/augment_policy.h"
#include "runspec/model_config.h"
#include "worker/layers/sequential.h"
#include "worker/models/gan_model.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

Sequential MakeImageDcganGenerator(const ImageDcganConfig& config);
Sequential MakeImageDcganDiscriminator(const ImageDcganConfig& config);

// Both networks with their flat parameter buffers (zero until Initialize). A data row is
// one [channels, S, S] image in [-1, 1]; the generator's input is standard normal noise
// [rows, noise_dim].
class ImageDcgan final : public GanModel {
 public:
  // `augment`: what D's inputs pass through in a training step (--augment; gan_step.h).
  explicit ImageDcgan(const ImageDcganConfig& config, Device device = Device::kCpu, const AugmentPolicy& augment = {});
  ImageDcgan(const ImageDcgan&) = delete;
  ImageDcgan& operator=(const ImageDcgan&) = delete;

  const ImageDcganConfig& config() const { return config_; }
  std::string name() const override { return "dcgan"; }
  Sequential& generator() override { return generator_; }
  Sequential& discriminator() override { return discriminator_; }
  FlatParameters& g_params() override { return *g_params_; }
  FlatParameters& d_params() override { return *d_params_; }
  Shape SampleShape() const override { return Shape{config_.channels, config_.image_size, config_.image_size}; }

  // The rows are the real images; the noise is drawn for the whole global batch.
  GanInputs StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                       Device device) const override;
  // The unconditional GAN loss (gan_step.h), D's inputs augmented as `augment` says.
  GanStepResult ComputeGradients(const Context& ctx, const GanInputs& inputs, const GanLossWeights& weights) override;
  Tensor SampleInputs(Rng& rng, int64_t count) const override;
  // examples/dcgan's nn.Sequential names: main.<index of the module>.
  TorchNames TorchStateDictNames(GanNetwork network) const override;

 private:
  ImageDcganConfig config_;
  AugmentPolicy augment_;
  Sequential generator_;
  Sequential discriminator_;
  std::unique_ptr<FlatParameters> g_params_;
  std::unique_ptr<FlatParameters> d_params_;
};

}  // namespace gantry
