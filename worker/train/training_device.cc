#include "worker/train/training_device.h"

#include "absl/strings/str_cat.h"
#include "worker/tensor/tensor.h"
#if GANTRY_HAVE_CUDA
#include "worker/tensor/cuda/cuda_device.h"
#endif

namespace gantry {

absl::Status CheckTrainingDevice(const std::string& device) {
  if (device == "cpu") return absl::OkStatus();
  if (device != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat("--device: bad value '", device, "' (one of cpu, cuda)"));
  }
  if (!BuiltWithCuda()) {
    return absl::InvalidArgumentError(
        "--device cuda: this gantry-worker was built without CUDA (rebuild with the CUDA toolkit and "
        "-DGANTRY_CUDA=ON); use --device cpu");
  }
#if GANTRY_HAVE_CUDA
  if (absl::Status visible = cuda::DeviceVisible(); !visible.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device cuda: no CUDA device visible (", visible.message(), "); use --device cpu"));
  }
#endif
  return absl::InvalidArgumentError(
      "--device cuda: training on the GPU is not implemented yet (the CUDA kernels and the NCCL all-reduce are "
      "built and tested op by op, but the layers, optimizers and data loader still work in host memory); "
      "use --device cpu");
}

}  // namespace gantry
