// EigenCpuBackend's 16-bit copies and loss-scaling passes: the bf16 copy of a saved
// input, the bf16 wire format of a gradient, and the unscale + found-inf check (the
// latter two in bf16_wire.cc and gradient_unscale.cc, vectorised there).
#include <bit>
#include <cstdint>

#include "common/vector_clones.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/cpu/gradient_unscale.h"

namespace gantry {

// bf16::FromFloat written without branches, so the compiler vectorises the loop: it runs
// on every bf16 forward, over every saved input.
namespace {

GANTRY_VECTOR_CLONES
void NarrowToBf16Kernel(int64_t count, const float* from, uint16_t* to) {
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(from[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (u >> 16) | 0x0040u;
    to[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

}  // namespace

void EigenCpuBackend::NarrowToBf16(int64_t count, const float* from, uint16_t* to) {
  NarrowToBf16Kernel(count, from, to);
}

namespace {

GANTRY_VECTOR_CLONES
void WidenFromBf16Kernel(int64_t count, const uint16_t* from, float* to) {
  for (int64_t i = 0; i < count; ++i) to[i] = std::bit_cast<float>(static_cast<uint32_t>(from[i]) << 16);
}

}  // namespace

void EigenCpuBackend::WidenFromBf16(int64_t count, const uint16_t* from, float* to) {
  WidenFromBf16Kernel(count, from, to);
}

void EigenCpuBackend::ToWireBf16(int64_t count, const float* grads, uint16_t* wire) {
  gantry::ToWireBf16(grads, wire, count);
}

bool EigenCpuBackend::UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) {
  return gantry::UnscaleAndCheckFinite(grads, count, inv_scale);
}

bool EigenCpuBackend::UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale,
                                                    float* grads) {
  return gantry::UnscaleFromBf16AndCheckFinite(wire, grads, count, inv_scale);
}

}  // namespace gantry
