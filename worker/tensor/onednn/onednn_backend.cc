#include "worker/tensor/onednn/onednn_backend.h"

#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry {

OnednnBackend& OnednnCpuBackend() {
  static OnednnBackend backend;
  return backend;
}

std::string OnednnDescription() { return onednn::Describe(); }

}  // namespace gantry
