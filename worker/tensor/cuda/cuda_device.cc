#include "worker/tensor/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"

namespace gantry::cuda {
absl::StatusOr<int> VisibleDeviceCount() {
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

absl::Status DeviceVisible() { return VisibleDeviceCount().status(); }

absl::StatusOr<int> SelectDeviceForLocalRank(int local_rank) {
  absl::StatusOr<int> count = VisibleDeviceCount();
  if (!count.ok()) return count.status();
  const int device = local_rank % *count;
  const cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaSetDevice(", device, ") for local rank ", local_rank, ": ",
                                            cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
  }
  return device;
}

std::string PciBusId(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "unknown bus";
  }
  return id;
}

std::string DeviceName(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "unknown device";
  }
  return prop.name;
}

}  // namespace gantry::cuda
