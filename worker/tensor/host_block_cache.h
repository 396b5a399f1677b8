// Host memory for tensors larger than glibc keeps in its heap.
//
// A training step allocates and frees the same activation-sized buffers every step.
// glibc serves blocks above its mmap threshold with fresh mappings, and that threshold
// is capped at 32 MB on 64-bit, so every such buffer (a 256 px Pix2Pix at batch 4 has
// several: 4 x 128 x 128 x 128 floats is 33.5 MB) was mapped, page-faulted in and zeroed
// by the kernel, and unmapped again, every step: a conv writing one ran at 13 instead of
// ~90 GFLOP/s. This cache keeps freed large blocks and hands one back to the next request
// of the same size. It changes where memory comes from, never what is computed.
//
// Process-wide and thread-safe (ranks may run as threads). Blocks are 64-byte aligned.
// At most kMaxCachedBytes stay cached; a block that would exceed it is freed.
#pragma once

#include <cstddef>

namespace gantry {

class HostBlockCache {
 public:
  // Requests of at least this many bytes go through the cache; smaller ones straight to
  // the heap allocator, which already keeps them.
  static constexpr size_t kMinCachedBytes = size_t{32} << 20;
  static constexpr size_t kMaxCachedBytes = size_t{2} << 30;
  static constexpr size_t kAlignment = 64;

  static HostBlockCache& Instance();

  // A block of `bytes` (a multiple of kAlignment), or nullptr if the system has none.
  void* Allocate(size_t bytes);
  // Returns a block from Allocate(bytes).
  void Release(void* block, size_t bytes);

  // Bytes held in cached (free) blocks, for tests.
  size_t cached_bytes() const;
};

}  // namespace gantry
