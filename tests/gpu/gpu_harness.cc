#include "tests/gpu/gpu_harness.h"

#include <cmath>

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

Tensor SumAbs(std::initializer_list<Tensor> terms) {
  Tensor sum = Tensor::Zeros(terms.begin()->shape());
  for (const Tensor& t : terms) {
    EXPECT_EQ(t.numel(), sum.numel());
    for (int64_t i = 0; i < sum.numel(); ++i) sum.data()[i] += std::abs(t.at(i));
  }
  return sum;
}

}  // namespace gantry::testing
