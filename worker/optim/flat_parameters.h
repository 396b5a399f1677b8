// One flat fp32 buffer for all parameters of a network, one for their gradients, and
// one for non-trainable buffers (BatchNorm running statistics). Layers hold views into
// them, so the optimizer, the all-reduce and checkpoints each touch one contiguous array.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runspec/init_scheme.h"
#include "worker/layers/layer.h"
#include "worker/tensor/random.h"

namespace gantry {

class FlatParameters {
 public:
  struct Entry {
    std::string name;  // "<layer index>.<layer name>.<param name>"
    int64_t offset = 0;
    ParamSpec spec;
  };

  // Allocates the flat buffers for `layers` on `device` and binds every layer's views.
  explicit FlatParameters(std::span<Layer* const> layers, Device device = Device::kCpu);

  // Draws initial values: kernels by `scheme`, biases and betas 0, gammas 1, running
  // variances 1, running means 0. The draws are made on the host, so a network gets the
  // same values on every device.
  void Initialize(InitScheme scheme, Rng& rng);
  void ZeroGrads() const;

  const Tensor& params() const { return params_; }
  const Tensor& grads() const { return grads_; }
  const Tensor& buffers() const { return buffers_; }
  int64_t num_params() const { return params_.numel(); }
  const std::vector<Entry>& param_entries() const { return param_entries_; }
  // Where each layer's parameters start in params() and grads(), in the layer order the
  // buffers were built from, and one past the end: size layers + 1. Layer i holds
  // [layer_param_offsets()[i], layer_param_offsets()[i + 1]).
  const std::vector<int64_t>& layer_param_offsets() const { return layer_param_offsets_; }
  const std::vector<Entry>& buffer_entries() const { return buffer_entries_; }

 private:
  std::vector<Entry> param_entries_;
  std::vector<Entry> buffer_entries_;
  std::vector<int64_t> layer_param_offsets_;
  Tensor params_;
  Tensor grads_;
  Tensor buffers_;
};

}  // namespace gantry
