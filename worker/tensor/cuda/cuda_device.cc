#include "worker/tensor/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"

namespace gantry::cuda {
namespace {

absl::StatusOr<int> DeviceCount() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error behind for later, unrelated checks
    return absl::FailedPreconditionError(
        absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
  }
  if (count == 0) return absl::FailedPreconditionError("0 CUDA devices");
  return count;
}

}  // namespace

absl::Status DeviceVisible() { return DeviceCount().status(); }

absl::StatusOr<int> SelectDeviceForLocalRank(int local_rank) {
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  const int device = local_rank % *count;
  const cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaSetDevice(", device, ") for local rank ", local_rank, ": ",
                                            cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
  }
  return device;
}

}  // namespace gantry::cuda
