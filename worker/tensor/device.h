// Where a tensor's memory lives, and so which backend's kernels may touch it.
#pragma once

namespace gantry {

enum class Device { kCpu, kCuda };

constexpr const char* DeviceName(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

}  // namespace gantry
