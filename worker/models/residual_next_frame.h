// A next-frame generator that predicts the CHANGE of the frame (--predict delta):
//   y = x[:, 0:C] + inner(x),   C = inner's output channels,
// where x is the condition (the current frame in its first C channels, then the mask)
// and inner is the U-Net. Every consumer of the generator (the training step, the
// held-out scores, the samples, the rollout's tiles) then still receives the next frame
// itself, so none of them needs to know the mode.
//
// Why: one step of a flow field is mostly the field itself (on make-flow's default
// spacing the held-out change is about 15% of the frame, relative L2). Predicting the
// whole frame asks the tanh output to reproduce every value to that accuracy before it
// beats copying the input; predicting the change starts AT persistence (inner's output
// is near zero at N(0, 0.02) initialisation) and only has to learn the small part.
//
// Parameters and buffers are the inner layer's, in its order, named
// "<inner name>.<inner's name for it>" (so "0.residual.unet.down.0...." in the flat
// layout): a checkpoint of a frame-predicting generator ("0.unet....") does not match a
// delta one, and resuming or rolling out with the other mode fails naming the layout.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "worker/layers/layer.h"

namespace gantry {

class ResidualNextFrame final : public Layer {
 public:
  // `inner` maps [N, Cin, H, W] to [N, C, H, W] with C <= Cin.
  explicit ResidualNextFrame(std::unique_ptr<Layer> inner);

  std::string name() const override { return "residual"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;
  std::vector<ParamSpec> BufferSpecs() const override;
  void BindBuffers(std::span<const Tensor> buffers) override;

  // The cache holds one child: inner's.
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  // dL/d(inner output) is dy itself; dL/dx is inner's input gradient plus dy on the
  // first C channels.
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache, bool want_input_grad) override;

  Layer& inner() const { return *inner_; }

 private:
  std::vector<ParamSpec> Prefixed(std::vector<ParamSpec> specs) const;

  std::unique_ptr<Layer> inner_;
};

}  // namespace gantry
