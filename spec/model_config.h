// The settings of each model a run can train (--model), as plain values: the networks
// themselves are built from them in worker/models/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry {

// The models a run can name (--model); worker/models/model_registry.h builds each.
const std::vector<std::string>& ModelNames();

// The DCGAN of "A Novel Mixed Precision Distributed TPU GAN" (worker/models/dcgan.h).
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
  bool operator==(const DcganConfig&) const = default;
};

}  // namespace gantry
