#include "worker/layers/saved_input.h"

#include <bit>
#include <cstdint>

#include "common/bf16.h"

namespace gantry {
namespace {

// bf16::FromFloat (round to nearest even, NaN kept quiet) written without branches, so
// the compiler vectorises the loop: this runs on every bf16 forward, over every saved
// input.
void NarrowToBf16(const float* from, uint16_t* to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(from[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (u >> 16) | 0x0040u;
    to[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

void WidenFromBf16(const uint16_t* from, float* to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) to[i] = std::bit_cast<float>(static_cast<uint32_t>(from[i]) << 16);
}

}  // namespace

Tensor KeepInputForBackward(const Context& ctx, const Tensor& x) {
  if (ctx.precision != MathPrecision::kBf16) return x;
  Tensor kept = Tensor::Uninitialized(x.shape(), DType::kBF16);
  NarrowToBf16(x.data(), reinterpret_cast<uint16_t*>(kept.data_bf16()), x.numel());
  return kept;
}

Tensor SavedInputAsFloat(const Tensor& saved) {
  if (saved.dtype() == DType::kF32) return saved;
  Tensor wide = Tensor::Uninitialized(saved.shape());
  WidenFromBf16(reinterpret_cast<const uint16_t*>(saved.data_bf16()), wide.data(), saved.numel());
  return wide;
}

}  // namespace gantry
