#include "worker/tensor/onednn/onednn_backend.h"

namespace gantry {

OnednnBackend& OnednnCpuBackend() {
  static OnednnBackend backend;
  return backend;
}

}  // namespace gantry
