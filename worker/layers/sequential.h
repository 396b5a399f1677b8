// A chain of layers run in order; the cache holds one ActivationCache per layer.
#pragma once

#include <memory>
#include <vector>

#include "worker/layers/layer.h"

namespace gantry {

struct SequentialCache {
  std::vector<ActivationCache> per_layer;
};

class Sequential {
 public:
  Sequential() = default;
  Sequential(Sequential&&) = default;
  Sequential& operator=(Sequential&&) = default;

  Sequential& Add(std::unique_ptr<Layer> layer);

  Shape OutputShape(const Shape& input) const;
  Tensor Forward(const Context& ctx, const Tensor& x, SequentialCache* cache) const;
  // Backpropagates through every layer in reverse; returns dL/dx when want_input_grad.
  Tensor Backward(const Context& ctx, const Tensor& dy, const SequentialCache& cache,
                  bool want_input_grad) const;

  std::vector<Layer*> layers() const;
  size_t size() const { return layers_.size(); }

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
};

}  // namespace gantry
