#include "worker/layers/sequential.h"

namespace gantry {

Sequential& Sequential::Add(std::unique_ptr<Layer> layer) {
  layers_.push_back(std::move(layer));
  return *this;
}

Shape Sequential::OutputShape(const Shape& input) const {
  Shape s = input;
  for (const auto& layer : layers_) s = layer->OutputShape(s);
  return s;
}

Tensor Sequential::Forward(const Context& ctx, const Tensor& x, SequentialCache* cache) const {
  cache->per_layer.resize(layers_.size());
  Tensor h = x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Context layer_ctx = ctx;
    // Each layer gets its own dropout stream so two Dropout layers never share a mask.
    layer_ctx.dropout_seed = ctx.dropout_seed ^ (0x9e3779b97f4a7c15ull * (i + 1));
    h = layers_[i]->Forward(layer_ctx, h, &cache->per_layer[i]);
  }
  return h;
}

Tensor Sequential::Backward(const Context& ctx, const Tensor& dy, const SequentialCache& cache,
                            bool want_input_grad) const {
  CHECK_EQ(cache.per_layer.size(), layers_.size()) << "cache is not from this network's Forward";
  Tensor g = dy;
  Context layer_ctx = ctx;
  layer_ctx.gradients_ready = nullptr;
  for (size_t i = layers_.size(); i-- > 0;) {
    const bool need_dx = want_input_grad || i > 0;
    g = layers_[i]->Backward(layer_ctx, g, cache.per_layer[i], need_dx);
    if (ctx.gradients_ready != nullptr && ctx.param_grads) ctx.gradients_ready->LayersFinal(i);
  }
  return want_input_grad ? g : Tensor();
}

std::vector<Layer*> Sequential::layers() const {
  std::vector<Layer*> out;
  out.reserve(layers_.size());
  for (const auto& layer : layers_) out.push_back(layer.get());
  return out;
}

}  // namespace gantry
