#include "worker/tensor/onednn/onednn_backend.h"

#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry {

OnednnBackend& OnednnCpuBackend() {
  static OnednnBackend backend;
  return backend;
}

std::string OnednnDescription() { return onednn::Describe(); }

std::string OnednnBackend::ProductPath(MathPrecision precision) const {
  const std::string name(MathPrecisionName(precision));
  if (precision == MathPrecision::kFp32) return "oneDNN fp32 kernels";
  if (precision == MathPrecision::kFp16) {
    return "oneDNN fp32 kernels on operands rounded to fp16 (oneDNN 2.6 has no x86 fp16 kernels)";
  }
  const onednn::Bf16Kernels& bf16 = onednn::NativeBf16Kernels();
  if (bf16.native) return "oneDNN bf16 kernels on " + bf16.isa + ", fp32 accumulation";
  return "oneDNN fp32 kernels on operands rounded to bf16 (no bf16 kernels on this CPU: " + bf16.isa +
         "; fp32 kernels on rounded operands give the same numbers at fp32 speed)";
}

}  // namespace gantry
