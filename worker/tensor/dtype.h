// Element types a tensor can hold. Compute is fp32 today; bf16 is the storage type of
// the mixed-precision path.
#pragma once

#include <cstddef>
#include <string_view>

namespace gantry {

enum class DType { kF32, kBF16 };

constexpr size_t DTypeSize(DType t) { return t == DType::kF32 ? 4 : 2; }
constexpr std::string_view DTypeName(DType t) { return t == DType::kF32 ? "f32" : "bf16"; }

}  // namespace gantry
