#include "worker/layers/saved_input.h"

#include <cstdint>

namespace gantry {

Tensor KeepInputForBackward(const Context& ctx, const Tensor& x) {
  if (ctx.precision != MathPrecision::kBf16) return x;
  Tensor kept = ctx.Uninitialized(x.shape(), DType::kBF16);
  ctx.backend->NarrowToBf16(x.numel(), x.data(), kept.data_bf16_bits());
  return kept;
}

Tensor SavedInputAsFloat(const Context& ctx, const Tensor& saved) {
  if (saved.dtype() == DType::kF32) return saved;
  Tensor wide = ctx.Uninitialized(saved.shape());
  ctx.backend->WidenFromBf16(saved.numel(), reinterpret_cast<const uint16_t*>(saved.data_bf16()), wide.data());
  return wide;
}

}  // namespace gantry
