#include "worker/layers/saved_input.h"

#include "common/bf16.h"

namespace gantry {

Tensor KeepInputForBackward(const Context& ctx, const Tensor& x) {
  if (ctx.precision != MathPrecision::kBf16) return x;
  Tensor kept = Tensor::Uninitialized(x.shape(), DType::kBF16);
  const float* from = x.data();
  bf16* to = kept.data_bf16();
  for (int64_t i = 0; i < x.numel(); ++i) to[i] = bf16::FromFloat(from[i]);
  return kept;
}

Tensor SavedInputAsFloat(const Tensor& saved) {
  if (saved.dtype() == DType::kF32) return saved;
  Tensor wide = Tensor::Uninitialized(saved.shape());
  const bf16* from = saved.data_bf16();
  float* to = wide.data();
  for (int64_t i = 0; i < saved.numel(); ++i) to[i] = from[i].ToFloat();
  return wide;
}

}  // namespace gantry
