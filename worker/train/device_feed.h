// Each step's real images on the training device: the prefetch loader's host batches
// as they are on the CPU, or uploaded to the GPU one step ahead (through pinned memory on
// a copy stream, worker/tensor/cuda/batch_uploader.h), so the copy of batch k+1 runs
// while the GPU computes step k.
#pragma once

#include <memory>
#include <optional>

#include "worker/data/prefetch_loader.h"
#include "worker/tensor/tensor.h"

namespace gantry {

namespace cuda {
class BatchUploader;
}

class DeviceFeed {
 public:
  // `loader` must outlive the feed. kCuda needs a CUDA build (CHECK).
  DeviceFeed(PrefetchLoader& loader, Device device);
  ~DeviceFeed();
  DeviceFeed(const DeviceFeed&) = delete;
  DeviceFeed& operator=(const DeviceFeed&) = delete;

  // The next batch on the device, or nullopt once the epoch is exhausted. A GPU batch may
  // be used by work queued before the following Next() call, and not after.
  std::optional<Tensor> Next();

 private:
  PrefetchLoader& loader_;
  std::unique_ptr<cuda::BatchUploader> uploader_;  // null on the CPU
};

}  // namespace gantry
