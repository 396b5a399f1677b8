#include "runspec/mixed_precision.h"

#include "absl/strings/str_cat.h"

namespace gantry {

std::string PrecisionName(MathPrecision precision) {
  switch (precision) {
    case MathPrecision::kFp32:
      return "fp32";
    case MathPrecision::kBf16:
      return "bf16";
    case MathPrecision::kFp16:
      return "fp16";
  }
  return "unknown";
}

std::string WireDtypeName(WireDtype dtype) { return dtype == WireDtype::kBf16 ? "bf16" : "fp32"; }

std::string DescribePrecision(const MixedPrecision& mixed, int world_size) {
  std::string out = PrecisionName(mixed.precision);
  const LossScaleConfig& ls = mixed.loss_scale;
  if (ls.mode == LossScaleMode::kDynamic) absl::StrAppend(&out, ", dynamic loss scaling");
  if (ls.mode == LossScaleMode::kStatic) absl::StrAppend(&out, ", static loss scale ", ls.init_scale);
  if (mixed.allreduce_dtype == WireDtype::kBf16 && world_size > 1) absl::StrAppend(&out, ", bf16 all-reduce");
  return out;
}

}  // namespace gantry
