#include "worker/tensor/cuda/cuda_memory.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "worker/tensor/cuda/cuda_check.h"

namespace gantry::cuda {
namespace {

// Size classes: 512-byte granules up to 1 MiB, then powers of two split into quarters
// (at most 25 % waste), so the few dozen activation sizes of a step each map to one
// class and freed blocks are found again.
size_t SizeClass(size_t nbytes) {
  constexpr size_t kGranule = 512, kSmall = size_t{1} << 20;
  if (nbytes <= kSmall) return std::max<size_t>(kGranule, (nbytes + kGranule - 1) / kGranule * kGranule);
  size_t pow2 = kSmall;
  while (pow2 * 2 < nbytes) pow2 *= 2;
  const size_t quarter = pow2 / 4;
  return (nbytes + quarter - 1) / quarter * quarter;
}

class CachingAllocator {
 public:
  std::byte* Allocate(size_t nbytes) {
    const size_t size = SizeClass(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        std::byte* block = it->second.back();
        it->second.pop_back();
        return block;
      }
    }
    void* block = nullptr;
    cudaError_t err = cudaMalloc(&block, size);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the error state before retrying
      ReleaseCached();
      err = cudaMalloc(&block, size);
    }
    CHECK(err == cudaSuccess) << "cudaMalloc(" << size << " bytes): " << cudaGetErrorName(err) << " ("
                              << cudaGetErrorString(err) << ")";
    return static_cast<std::byte*>(block);
  }

  void Release(std::byte* block, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    free_[SizeClass(nbytes)].push_back(block);
  }

  void ReleaseCached() {
    std::map<size_t, std::vector<std::byte*>> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(free_);
    }
    // Work still queued may read a block freed by the host: finish it first.
    GANTRY_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(ComputeStream())));
    for (auto& [size, list] : blocks) {
      for (std::byte* block : list) GANTRY_CUDA_CHECK(cudaFree(block));
    }
  }

 private:
  std::mutex mu_;
  std::map<size_t, std::vector<std::byte*>> free_;  // guarded by mu_
};

// Leaked on purpose: tensors may be destroyed during static destruction, after the
// CUDA runtime has begun tearing down; returning blocks to a live cache is always safe.
CachingAllocator& Allocator() {
  static auto* allocator = new CachingAllocator();
  return *allocator;
}

}  // namespace

void* ComputeStream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    GANTRY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  return stream;
}

std::byte* Allocate(size_t nbytes) { return Allocator().Allocate(nbytes); }
void Release(std::byte* block, size_t nbytes) { Allocator().Release(block, nbytes); }
void ReleaseCachedBlocks() { Allocator().ReleaseCached(); }

void Zero(void* device_ptr, size_t nbytes) {
  GANTRY_CUDA_CHECK(cudaMemsetAsync(device_ptr, 0, nbytes, static_cast<cudaStream_t>(ComputeStream())));
}

void Copy(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t nbytes) {
  if (nbytes == 0) return;
  const cudaMemcpyKind kind = dst_on_device ? (src_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                            : (src_on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  auto stream = static_cast<cudaStream_t>(ComputeStream());
  GANTRY_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, stream));
  // Pageable host memory: the copy in has consumed src when the call returns; a copy
  // out must finish before the host reads dst.
  if (!dst_on_device) GANTRY_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace gantry::cuda
