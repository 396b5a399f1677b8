// How a network's weights are drawn before training (--init).
#pragma once

namespace gantry {

enum class InitScheme {
  kGlorotUniform,  // Keras' default (the paper's TensorFlow DCGAN)
  kNormal002,      // N(0, 0.02), the DCGAN paper's alternative
};

}  // namespace gantry
