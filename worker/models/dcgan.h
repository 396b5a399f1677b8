// The DCGAN of "A Novel Mixed Precision Distributed TPU GAN" (Table 1; the TensorFlow
// DCGAN tutorial network) for 1x28x28 images:
//   G: z[N,100] -> Linear(100->12544, no bias) -> BN -> LeakyReLU -> reshape 256x7x7
//      -> ConvT 5x5 s1 ->128x7x7 -> BN -> LeakyReLU -> ConvT 5x5 s2 ->64x14x14 -> BN
//      -> LeakyReLU -> ConvT 5x5 s2 ->1x28x28 -> tanh
//   D: x[N,1,28,28] -> Conv 5x5 s2 ->64x14x14 -> LeakyReLU -> Dropout -> Conv 5x5 s2
//      ->128x7x7 -> LeakyReLU -> Dropout -> Flatten 6272 -> Linear ->1 (logit)
// Each network's parameters live in one flat buffer, in PyTorch's parameters() order
// for the reference model in bench/torch/dcgan_model.py.
#pragma once

#include <cstdint>
#include <memory>

#include "runspec/augment_policy.h"
#include "runspec/model_config.h"
#include "worker/layers/sequential.h"
#include "worker/models/gan_model.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

inline constexpr int64_t kDcganGeneratorParams = 2'305'472;
inline constexpr int64_t kDcganDiscriminatorParams = 212'865;

Sequential MakeDcganGenerator(const DcganConfig& config);
Sequential MakeDcganDiscriminator(const DcganConfig& config);

// Both networks with their flat parameter buffers (zero until Initialize). A data row is
// one 1x28x28 image; the generator's input is standard normal noise [rows, noise_dim].
class Dcgan final : public GanModel {
 public:
  // Both flat buffers on `device` (the backend that trains the model must work there).
  // `augment`: what D's inputs pass through in a training step (--augment; gan_step.h).
  explicit Dcgan(const DcganConfig& config, Device device = Device::kCpu, const AugmentPolicy& augment = {});
  Dcgan(const Dcgan&) = delete;
  Dcgan& operator=(const Dcgan&) = delete;

  const DcganConfig& config() const { return config_; }
  const AugmentPolicy& augment() const { return augment_; }
  std::string name() const override { return "dcgan"; }
  Sequential& generator() override { return generator_; }
  Sequential& discriminator() override { return discriminator_; }
  FlatParameters& g_params() override { return *g_params_; }
  FlatParameters& d_params() override { return *d_params_; }
  Shape SampleShape() const override { return Shape{1, 28, 28}; }

  // The rows are the real images; the noise is drawn for the whole global batch.
  GanInputs StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                       Device device) const override;
  // The unconditional GAN loss (gan_step.h), D's inputs augmented as `augment` says.
  GanStepResult ComputeGradients(const Context& ctx, const GanInputs& inputs, const GanLossWeights& weights) override;
  // Noise rows, as in training.
  Tensor SampleInputs(Rng& rng, int64_t count) const override;
  // bench/torch/dcgan_model.py's Generator and Discriminator.
  TorchNames TorchStateDictNames(GanNetwork network) const override;

 private:
  DcganConfig config_;
  AugmentPolicy augment_;
  Sequential generator_;
  Sequential discriminator_;
  std::unique_ptr<FlatParameters> g_params_;
  std::unique_ptr<FlatParameters> d_params_;
};

}  // namespace gantry
