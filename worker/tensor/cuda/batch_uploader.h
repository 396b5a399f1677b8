// Host batches to the GPU through pinned memory, on a copy stream of their own, so the
// upload of one step's batch overlaps the compute stream's work on the step before.
// Plain declarations (no CUDA header), for the trainer's feed (worker/train/device_feed.h).
//
// Slots: each of kSlots holds a pinned host buffer and a device buffer. Start(batch)
// copies the batch into the next slot's pinned buffer (host memcpy) and queues the
// host-to-device copy on the copy stream; TakeReady() hands out the oldest started
// batch as a device tensor and makes the compute stream wait for its copy, so work queued
// after TakeReady() sees the bytes and work queued before it is not held up.
//
// Reuse: a slot is rewritten only after the compute stream has passed the point where
// its previous batch was handed on (an event recorded at the next TakeReady()), so a
// caller may use a taken tensor until it calls TakeReady() again, and no longer.
#pragma once

#include <memory>

#include "worker/tensor/tensor.h"

namespace gantry::cuda {

class BatchUploader {
 public:
  static constexpr int kSlots = 2;

  BatchUploader();
  ~BatchUploader();
  BatchUploader(const BatchUploader&) = delete;
  BatchUploader& operator=(const BatchUploader&) = delete;

  // Queues the upload of `host` (an fp32 host tensor). Every slot but the one whose batch
  // the caller holds may be in flight: at most kSlots - 1 batches started and not yet taken
  // once a batch has been taken (CHECK).
  void Start(const Tensor& host);
  // The oldest started batch on the device (same shape). CHECK-fails when none is started.
  Tensor TakeReady();
  // Batches started and not yet taken.
  int pending() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gantry::cuda
