#include "worker/train/mixed_precision.h"

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

}  // namespace gantry
