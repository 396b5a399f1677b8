// The optimizer settings of a run (--optimizer, --lr, --beta1, ...): one optimizer of
// this kind per network (worker/optim/optimizer.h builds them).
#pragma once

#include <string>

namespace gantry {

struct OptimizerConfig {
  std::string kind = "adam";  // "adam" | "sgd"
  float lr = 1e-4f;
  float beta1 = 0.5f;         // Adam; the paper's tutorial uses 0.9, DCGAN practice 0.5
  float beta2 = 0.999f;
  float eps = 1e-7f;          // Keras' Adam default
  float momentum = 0.9f;      // SGD
  bool operator==(const OptimizerConfig&) const = default;
};

}  // namespace gantry
