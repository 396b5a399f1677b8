// The pass over an all-reduced gradient buffer that ends loss scaling: multiply by
// 1/scale and find out, in the same pass, whether any result is inf or NaN (the
// found-inf check of GradScaler, fused with the unscale as PyTorch's
// _amp_foreach_non_finite_check_and_unscale_ does). For a bf16 wire buffer the
// conversion back to fp32 is fused in as well.
//
// The check reads the results, so it also catches a finite value that the multiplication
// overflows (possible only once a backoff took the scale below 1). The outcome is a pure
// function of the input bytes and inv_scale, so ranks holding identical all-reduced
// bytes and the same scale always agree on it.
#pragma once

#include <cstdint>

namespace gantry {

// grads[i] *= inv_scale; returns whether every result is finite.
bool UnscaleAndCheckFinite(float* grads, int64_t count, float inv_scale);

// grads[i] = float(wire[i]) * inv_scale (wire holds bf16 bits); returns whether every
// result is finite.
bool UnscaleFromBf16AndCheckFinite(const uint16_t* wire, float* grads, int64_t count, float inv_scale);

// The scalar versions, always compiled; the functions above use AVX-512 where the build
// targets it, and the tests compare both.
bool UnscaleAndCheckFinitePortable(float* grads, int64_t count, float inv_scale);
bool UnscaleFromBf16AndCheckFinitePortable(const uint16_t* wire, float* grads, int64_t count, float inv_scale);

}  // namespace gantry
