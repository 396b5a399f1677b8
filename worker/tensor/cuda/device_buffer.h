// Scratch device memory for one backend call, from the caching allocator
// (cuda_memory.h). Returning it at the end of the call is safe although kernels using it
// may still be queued: the allocator hands it out again only to work ordered after them
// on the same stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "worker/tensor/cuda/cuda_memory.h"

namespace gantry::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t nbytes) : nbytes_(nbytes), bytes_(nbytes > 0 ? Allocate(nbytes) : nullptr) {}
  ~DeviceBuffer() {
    if (bytes_ != nullptr) Release(bytes_, nbytes_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Replaces the block with a new one of `nbytes` (contents unspecified).
  void Reset(size_t nbytes) {
    if (bytes_ != nullptr) Release(bytes_, nbytes_);
    nbytes_ = nbytes;
    bytes_ = nbytes > 0 ? Allocate(nbytes) : nullptr;
  }

  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(bytes_);
  }

 private:
  size_t nbytes_ = 0;
  std::byte* bytes_ = nullptr;
};

}  // namespace gantry::cuda
