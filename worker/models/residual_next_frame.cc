#include "worker/models/residual_next_frame.h"

#include "common/check.h"

namespace gantry {
namespace {

// y[i, 0:c] += x[i, 0:c] for every sample i; x has x_channels channels, y has c.
void AddLeadingChannels(const Context& ctx, const Tensor& x, int64_t x_channels, int64_t c, int64_t plane,
                        Tensor& y) {
  for (int64_t i = 0; i < y.dim(0); ++i) {
    ctx.backend->Axpy(c * plane, 1.0f, x.data() + i * x_channels * plane, y.data() + i * c * plane);
  }
}

}  // namespace

ResidualNextFrame::ResidualNextFrame(std::unique_ptr<Layer> inner) : inner_(std::move(inner)) {
  CHECK(inner_ != nullptr);
}

Shape ResidualNextFrame::OutputShape(const Shape& input) const {
  const Shape out = inner_->OutputShape(input);
  CHECK(input.rank() == 4 && out.rank() == 4 && out[0] == input[0] && out[1] <= input[1] && out[2] == input[2] &&
        out[3] == input[3])
      << "residual next frame: " << input.ToString() << " -> " << out.ToString()
      << " does not keep the field's size with at most the input's channels";
  return out;
}

std::vector<ParamSpec> ResidualNextFrame::Prefixed(std::vector<ParamSpec> specs) const {
  for (ParamSpec& s : specs) s.name = inner_->name() + "." + s.name;
  return specs;
}

std::vector<ParamSpec> ResidualNextFrame::ParamSpecs() const { return Prefixed(inner_->ParamSpecs()); }

void ResidualNextFrame::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  inner_->BindParams(params, grads);
}

std::vector<ParamSpec> ResidualNextFrame::BufferSpecs() const { return Prefixed(inner_->BufferSpecs()); }

void ResidualNextFrame::BindBuffers(std::span<const Tensor> buffers) { inner_->BindBuffers(buffers); }

Tensor ResidualNextFrame::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  const Shape out_shape = OutputShape(x.shape());
  cache->saved.clear();
  cache->children.assign(1, ActivationCache{});
  const Tensor change = inner_->Forward(ctx, x, &cache->children[0]);
  // A new tensor: inner may have saved `change` for its Backward (tanh keeps its output).
  Tensor y = ctx.Uninitialized(out_shape);
  ctx.backend->Copy(change.numel(), change.data(), y.data());
  AddLeadingChannels(ctx, x, x.dim(1), out_shape[1], out_shape[2] * out_shape[3], y);
  return y;
}

Tensor ResidualNextFrame::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                                   bool want_input_grad) {
  CHECK_EQ(cache.children.size(), 1u) << "residual next frame: Backward without its Forward";
  Tensor dx = inner_->Backward(ctx, dy, cache.children[0], want_input_grad);
  if (!want_input_grad) return dx;
  const int64_t plane = dy.dim(2) * dy.dim(3);
  for (int64_t i = 0; i < dy.dim(0); ++i) {
    ctx.backend->Axpy(dy.dim(1) * plane, 1.0f, dy.data() + i * dy.dim(1) * plane, dx.data() + i * dx.dim(1) * plane);
  }
  return dx;
}

}  // namespace gantry
