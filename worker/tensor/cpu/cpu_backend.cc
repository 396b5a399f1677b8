#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

std::string EigenCpuBackend::ProductPath(MathPrecision precision) const {
  if (precision == MathPrecision::kFp32) return "Eigen fp32 GEMM";
  return std::string("Eigen fp32 GEMM on operands rounded to ") + std::string(MathPrecisionName(precision)) +
         " (the reference definition)";
}

Backend& CpuBackend() {
  static EigenCpuBackend backend;
  return backend;
}

}  // namespace gantry
