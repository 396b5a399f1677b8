#include "worker/tensor/backend_registry.h"

#include "worker/tensor/cpu/cpu_backend.h"
#if GANTRY_HAVE_ONEDNN
#include "worker/tensor/onednn/onednn_backend.h"
#endif
#if GANTRY_HAVE_CUDA
#include "worker/tensor/cuda/cuda_backend.h"
#endif

namespace gantry {

Backend* FindBackend(std::string_view name) {
  if (name == "eigen") return &CpuBackend();
#if GANTRY_HAVE_ONEDNN
  if (name == "onednn") return &OnednnCpuBackend();
#endif
#if GANTRY_HAVE_CUDA
  if (name == "cuda") return &TheCudaBackend();
#endif
  return nullptr;
}

std::vector<std::string> BuiltBackendNames() {
#if GANTRY_HAVE_ONEDNN
  return {"onednn", "eigen"};
#else
  return {"eigen"};
#endif
}

std::string_view DefaultBackendName() {
#if GANTRY_HAVE_ONEDNN
  return "onednn";
#else
  return "eigen";
#endif
}

}  // namespace gantry
