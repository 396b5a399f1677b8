// Device memory for Tensor storage (Device::kCuda) and the one CUDA stream all of a
// process's GPU work runs on. Plain declarations: no CUDA header, so tensor.cc (and
// anything else built by the host compiler) can call them.
//
// One stream per process: the CUDA backend's kernels, copies, the caching allocator's
// reuse and the NCCL all-reduce are all ordered on it, so a block freed by the host
// while kernels still read it is only handed out again to work queued after them.
#pragma once

#include <cstddef>

namespace gantry::cuda {

// The process's compute stream (a cudaStream_t, created non-blocking on the current
// device on first use). CHECK-fails with the CUDA error when no device is usable.
void* ComputeStream();

// A block of at least `nbytes` device bytes from the caching allocator: freed blocks
// are kept by size class and reused, because cudaMalloc/cudaFree synchronise the device
// and a step allocates the same activation sizes every time. CHECK-fails when the
// device is out of memory even after the cache is released.
std::byte* Allocate(size_t nbytes);
// Returns a block from Allocate (with the same nbytes) to the cache.
void Release(std::byte* block, size_t nbytes);
// Frees every cached block (cudaFree); the blocks in use are unaffected.
void ReleaseCachedBlocks();

// Zero `nbytes` of device memory (ordered on the compute stream).
void Zero(void* device_ptr, size_t nbytes);
// Copies `nbytes` between any two of host and device memory (the flags say which side
// is the device). Returns once the bytes are usable: a copy into host memory waits for
// the stream; copies into device memory are ordered on it.
void Copy(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t nbytes);

}  // namespace gantry::cuda
