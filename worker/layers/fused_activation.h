// An activation a layer applies to its own output, fused into the layer's last pass over
// it (what XLA does for the paper's BatchNorm + LeakyReLU and bias + LeakyReLU), in place
// of a separate activation layer after it.
#pragma once

#include "worker/tensor/backend.h"

namespace gantry {

struct FusedActivation {
  Activation f = Activation::kLeakyRelu;
  float slope = 0.0f;  // LeakyReLU's negative slope; must be >= 0 (so f' follows from the output)
};

}  // namespace gantry
