#include "worker/tensor/host_block_cache.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace gantry {
namespace {

struct FreeBlock {
  size_t bytes;
  void* block;
  uint64_t released;  // release order: the smallest is the oldest
};

struct CacheState {
  mutable std::mutex mu;
  std::vector<FreeBlock> free;  // tens of blocks at most: linear scans are cheap
  size_t cached_bytes = 0;
  uint64_t next_release = 0;
};

// Never destroyed: tensors in static storage may be released during exit.
CacheState& State() {
  static CacheState* state = new CacheState;
  return *state;
}

}  // namespace

HostBlockCache& HostBlockCache::Instance() {
  static HostBlockCache cache;
  return cache;
}

void* HostBlockCache::Allocate(size_t bytes) {
  if (bytes >= kMinCachedBytes) {
    CacheState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    // The most recently released block of this size: the likeliest to be in cache.
    size_t best = s.free.size();
    for (size_t i = 0; i < s.free.size(); ++i) {
      if (s.free[i].bytes == bytes && (best == s.free.size() || s.free[i].released > s.free[best].released)) best = i;
    }
    if (best != s.free.size()) {
      void* block = s.free[best].block;
      s.cached_bytes -= bytes;
      s.free.erase(s.free.begin() + static_cast<std::ptrdiff_t>(best));
      return block;
    }
  }
  return std::aligned_alloc(kAlignment, bytes);
}

void HostBlockCache::Release(void* block, size_t bytes) {
  if (block == nullptr) return;
  if (bytes < kMinCachedBytes || bytes > kMaxCachedBytes) {
    std::free(block);
    return;
  }
  CacheState& s = State();
  std::vector<void*> evicted;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    // Make room by dropping the oldest blocks (sizes a sweep has moved past).
    while (s.cached_bytes + bytes > kMaxCachedBytes) {
      size_t oldest = 0;
      for (size_t i = 1; i < s.free.size(); ++i) {
        if (s.free[i].released < s.free[oldest].released) oldest = i;
      }
      evicted.push_back(s.free[oldest].block);
      s.cached_bytes -= s.free[oldest].bytes;
      s.free.erase(s.free.begin() + static_cast<std::ptrdiff_t>(oldest));
    }
    s.free.push_back(FreeBlock{bytes, block, s.next_release++});
    s.cached_bytes += bytes;
  }
  for (void* b : evicted) std::free(b);
}

size_t HostBlockCache::cached_bytes() const {
  CacheState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.cached_bytes;
}

}  // namespace gantry
