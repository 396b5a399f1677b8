// Which GPU this process uses. No CUDA header here: the trainer and the tests include
// it in CUDA builds to ask whether a device is visible and to pick one per rank.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::cuda {

// OK when at least one CUDA device is visible to this process; otherwise
// FAILED_PRECONDITION saying why, in words (e.g. "cudaGetDeviceCount:
// cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime
// version)" where no driver is installed, or "0 CUDA devices").
absl::Status DeviceVisible();

// How many CUDA devices this process sees, or DeviceVisible()'s error.
absl::StatusOr<int> VisibleDeviceCount();

// Makes device `local_rank % device_count` current for this process (one GPU per rank
// of a node) and returns its index. Call before any other CUDA work of the process: the
// compute stream and the allocator bind to the device current at their first use.
absl::StatusOr<int> SelectDeviceForLocalRank(int local_rank);

// The device's PCI bus id ("0000:3B:00.0"), which tells two ranks' GPUs apart, or
// "unknown bus" when the driver cannot say.
std::string PciBusId(int device);

// The device's product name ("NVIDIA H100 80GB HBM3"), or "unknown device" when the
// driver cannot say.
std::string DeviceName(int device);

}  // namespace gantry::cuda
