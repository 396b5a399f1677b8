// The layer contract.
//
// A layer is a Forward/Backward pair. Everything Backward needs from Forward travels in
// an explicit ActivationCache owned by the caller, never in the layer, so one layer can
// run forward several times before any backward (the GAN step runs D on real and fake
// images, then differentiates both). Parameters and their gradients are views into one
// flat buffer per network (see worker/optim/flat_parameters.h); Backward accumulates
// into the gradient views, so callers zero the flat gradient buffer once per step.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "worker/tensor/backend.h"
#include "worker/tensor/shape.h"
#include "worker/tensor/tensor.h"

namespace gantry {

// Sums small per-channel statistics across the data-parallel replicas (sync-BN).
// Implementations adapt a Communicator; layers never see one. A failure (peer timeout)
// is recorded by the implementation and surfaced by the caller after the step, so Sum
// itself returns nothing and must leave `data` unchanged-or-summed, never garbage.
class ReplicaReducer {
 public:
  virtual ~ReplicaReducer() = default;
  virtual void Sum(float* data, int64_t count) = 0;  // in place, over all replicas, host memory
};

// Per-call execution settings.
// Told, during a network's last backward pass of a step, which of its parameter
// gradients are final: LayersFinal(i) means those of the network's layers i, i + 1, ...
// (its Sequential's top-level layers, FlatParameters' layer order) will not change again
// this step. Called with i falling by one per layer, on the computing thread; it may
// start sending those gradients (the overlapped gradient exchange) but not modify them.
class GradientsReadyHook {
 public:
  virtual ~GradientsReadyHook() = default;
  virtual void LayersFinal(size_t first_layer) = 0;
};

struct Context {
  Backend* backend = &CpuBackend();
  bool training = true;           // batch statistics and dropout on
  uint64_t dropout_seed = 0;      // fresh per forward pass, from the step's RNG
  // This rank's first row of the global batch: row i of a layer's input is row
  // row_offset + i of the step's batch, so a per-row draw (DiffAugment's) can be a function
  // of the global row and come out the same however many ranks share the batch.
  int64_t row_offset = 0;
  bool param_grads = true;        // Backward accumulates parameter gradients
  ReplicaReducer* sync_bn = nullptr;  // null: per-rank batch statistics
  MathPrecision precision = MathPrecision::kFp32;  // operands of GEMMs and convolutions
  // Sequential::Backward tells it after each of its layers' backward (and does not hand
  // it to the layers, whose own inner layers are numbered otherwise). Null: nobody asks.
  // Only a network's last backward pass with param_grads of a step may carry it.
  GradientsReadyHook* gradients_ready = nullptr;

  // Layers allocate their outputs, gradients and scratch here: on the backend's device.
  Device device() const { return backend->device(); }
  Tensor Uninitialized(Shape shape, DType dtype = DType::kF32) const {
    return Tensor::Uninitialized(std::move(shape), dtype, device());
  }
  Tensor Zeros(Shape shape) const { return Tensor::Zeros(std::move(shape), DType::kF32, device()); }
};

// Tensors a layer saved in Forward for its Backward (inputs, outputs, masks, stats). A
// composite layer (one built of other layers, like the Pix2Pix U-Net) keeps one child
// cache per inner layer in `children`.
struct ActivationCache {
  std::vector<Tensor> saved;
  std::vector<ActivationCache> children;
};

enum class Init { kGlorotUniform, kNormal002, kZeros, kOnes };

// A trainable (or, for buffers, non-trainable state) tensor a layer asks for.
struct ParamSpec {
  std::string name;   // e.g. "weight", "bias", "gamma"
  Shape shape;
  Init init = Init::kZeros;
  int64_t fan_in = 0;   // for Glorot: the receptive field times input channels
  int64_t fan_out = 0;  // ... times output channels
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string name() const = 0;
  // Output shape for an input shape (batch first), or CHECK-fails on a mismatch.
  virtual Shape OutputShape(const Shape& input) const = 0;

  // Trainable parameters, in binding order.
  virtual std::vector<ParamSpec> ParamSpecs() const { return {}; }
  // Receives views (same order as ParamSpecs) of the flat parameter and gradient buffers.
  virtual void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {}
  // Non-trainable state saved with the model (BatchNorm running statistics).
  virtual std::vector<ParamSpec> BufferSpecs() const { return {}; }
  virtual void BindBuffers(std::span<const Tensor> buffers) {}

  // y = layer(x); fills `cache` (cleared first) with what Backward needs.
  virtual Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) = 0;
  // Given dL/dy and the cache of the matching Forward: accumulates parameter gradients
  // (when ctx.param_grads) and returns dL/dx, or an undefined Tensor when
  // !want_input_grad.
  virtual Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                          bool want_input_grad) = 0;
};

}  // namespace gantry
