// The DCGAN of "A Novel Mixed Precision Distributed TPU GAN" (Table 1; the TensorFlow
// DCGAN tutorial network) for 1x28x28 images:
//   G: z[N,100] -> Linear(100->12544, no bias) -> BN -> LeakyReLU -> reshape 256x7x7
//      -> ConvT 5x5 s1 ->128x7x7 -> BN -> LeakyReLU -> ConvT 5x5 s2 ->64x14x14 -> BN
//      -> LeakyReLU -> ConvT 5x5 s2 ->1x28x28 -> tanh
//   D: x[N,1,28,28] -> Conv 5x5 s2 ->64x14x14 -> LeakyReLU -> Dropout -> Conv 5x5 s2
//      ->128x7x7 -> LeakyReLU -> Dropout -> Flatten 6272 -> Linear ->1 (logit)
// Each network's parameters live in one flat buffer, in PyTorch's parameters() order
// for the reference model in shared/reference/dcgan_torch.py.
#pragma once

#include <cstdint>
#include <memory>

#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

struct DcganConfig {
  int64_t noise_dim = 100;
  float leaky_slope = 0.3f;   // Keras LeakyReLU default
  float dropout = 0.3f;
  float bn_eps = 1e-3f;       // Keras BatchNormalization defaults
  float bn_momentum = 0.99f;
  // Each LeakyReLU runs inside the layer before it (BatchNorm in G, Conv2d + bias in D),
  // as XLA fuses them: same function, same parameters and flat layout, a memory pass and
  // a tensor fewer per activation. Off: separate activation layers. Measured with
  // gantry-bench-fusion (forward + backward of those layers, thread CPU time, batch
  // 256 / 64): G's BatchNorm + LeakyReLU 8.4 -> 6.7 / 1.9 -> 1.6 ms (12544 features),
  // 3.9 -> 3.3 / 0.88 -> 0.75 (128x7x7), 9.8 -> 7.8 / 1.76 -> 1.52 (64x14x14); D's bias +
  // LeakyReLU 8.2 -> 5.7 / 1.33 -> 1.11 (64x14x14), 2.8 -> 2.5 / 0.61 -> 0.55 (128x7x7):
  // 10-30% of those layers, about 1.5% of a oneDNN training step.
  bool fuse_activations = true;
};

inline constexpr int64_t kDcganGeneratorParams = 2'305'472;
inline constexpr int64_t kDcganDiscriminatorParams = 212'865;

Sequential MakeDcganGenerator(const DcganConfig& config);
Sequential MakeDcganDiscriminator(const DcganConfig& config);

// Both networks with their flat parameter buffers (zero until Initialize).
class Dcgan {
 public:
  // Both flat buffers on `device` (the backend that trains the model must work there).
  explicit Dcgan(const DcganConfig& config, Device device = Device::kCpu);
  Dcgan(const Dcgan&) = delete;
  Dcgan& operator=(const Dcgan&) = delete;

  // Draws the initial weights of G then D from one seeded stream.
  void Initialize(InitScheme scheme, uint64_t seed);

  const DcganConfig& config() const { return config_; }
  Sequential& generator() { return generator_; }
  Sequential& discriminator() { return discriminator_; }
  FlatParameters& g_params() { return *g_params_; }
  FlatParameters& d_params() { return *d_params_; }

 private:
  DcganConfig config_;
  Sequential generator_;
  Sequential discriminator_;
  std::unique_ptr<FlatParameters> g_params_;
  std::unique_ptr<FlatParameters> d_params_;
};

}  // namespace gantry
