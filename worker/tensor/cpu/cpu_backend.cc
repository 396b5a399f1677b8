#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

Backend& CpuBackend() {
  static EigenCpuBackend backend;
  return backend;
}

}  // namespace gantry
