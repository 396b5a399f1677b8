#include "tests/gpu/gpu_harness.h"

#include "worker/tensor/backend_registry.h"
#include "worker/tensor/cuda/cuda_device.h"

namespace gantry::testing {

std::string NoDeviceReason() {
  const absl::Status visible = cuda::DeviceVisible();
  return visible.ok() ? std::string() : std::string(visible.message());
}

Tensor ToGpu(const Tensor& host) { return host.ToDevice(Device::kCuda); }
Tensor ToHost(const Tensor& device) { return device.ToDevice(Device::kCpu); }

Backend& Cuda() { return *FindBackend("cuda"); }

}  // namespace gantry::testing
