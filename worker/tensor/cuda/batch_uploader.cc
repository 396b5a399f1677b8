#include "worker/tensor/cuda/batch_uploader.h"

#include <cuda_runtime.h>

#include <array>
#include <cstring>

#include "worker/tensor/cuda/cuda_check.h"
#include "worker/tensor/cuda/cuda_memory.h"

namespace gantry::cuda {
namespace {

cudaStream_t Compute() { return static_cast<cudaStream_t>(ComputeStream()); }

struct Slot {
  void* pinned = nullptr;
  size_t capacity = 0;       // bytes of `pinned` and `device`
  Tensor device;             // flat fp32 storage of `capacity` bytes on the GPU
  cudaEvent_t copied{};      // on the copy stream: the upload into `device` is done
  cudaEvent_t released{};    // on the compute stream: the previous batch here is no longer read
  Shape shape;               // of the batch in flight
};

}  // namespace

struct BatchUploader::State {
  cudaStream_t copy_stream{};
  std::array<Slot, kSlots> slots;
  int next_start = 0;  // the slot Start() fills next
  int next_take = 0;   // the slot TakeReady() hands out next
  int pending = 0;
  int last_taken = -1;  // the slot whose batch the caller holds
};

BatchUploader::BatchUploader() : state_(std::make_unique<State>()) {
  (void)ComputeStream();  // binds to the current device before the copy stream does
  GANTRY_CUDA_CHECK(cudaStreamCreateWithFlags(&state_->copy_stream, cudaStreamNonBlocking));
  for (Slot& s : state_->slots) {
    GANTRY_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
    GANTRY_CUDA_CHECK(cudaEventCreateWithFlags(&s.released, cudaEventDisableTiming));
  }
}

BatchUploader::~BatchUploader() {
  // Uploads may still be running: the pinned buffers are theirs until the stream ends.
  cudaStreamSynchronize(state_->copy_stream);
  for (Slot& s : state_->slots) {
    if (s.pinned != nullptr) cudaFreeHost(s.pinned);
    cudaEventDestroy(s.copied);
    cudaEventDestroy(s.released);
  }
  cudaStreamDestroy(state_->copy_stream);
}

void BatchUploader::Start(const Tensor& host) {
  CHECK(host.device() == Device::kCpu && host.dtype() == DType::kF32) << "BatchUploader: an fp32 host tensor";
  CHECK_LT(state_->pending, kSlots) << "BatchUploader: every slot holds a batch not yet taken";
  CHECK_NE(state_->next_start, state_->last_taken) << "BatchUploader: the next slot holds the batch in use";
  Slot& s = state_->slots[static_cast<size_t>(state_->next_start)];
  const size_t bytes = host.nbytes();
  if (bytes > s.capacity) {
    // The slot's earlier upload must be over before its pinned buffer goes.
    GANTRY_CUDA_CHECK(cudaEventSynchronize(s.copied));
    if (s.pinned != nullptr) GANTRY_CUDA_CHECK(cudaFreeHost(s.pinned));
    GANTRY_CUDA_CHECK(cudaMallocHost(&s.pinned, bytes));
    // From the compute stream's allocator: the block may have been freed by kernels still
    // queued there, so the first copy waits for the compute stream to get past this point.
    s.device = Tensor::Uninitialized(Shape{static_cast<int64_t>(bytes / sizeof(float))}, DType::kF32, Device::kCuda);
    s.capacity = bytes;
    GANTRY_CUDA_CHECK(cudaEventRecord(s.released, Compute()));
  }
  // The pinned buffer is free once the slot's previous upload has finished.
  GANTRY_CUDA_CHECK(cudaEventSynchronize(s.copied));
  std::memcpy(s.pinned, host.data(), bytes);
  GANTRY_CUDA_CHECK(cudaStreamWaitEvent(state_->copy_stream, s.released, 0));
  GANTRY_CUDA_CHECK(
      cudaMemcpyAsync(s.device.data(), s.pinned, bytes, cudaMemcpyHostToDevice, state_->copy_stream));
  GANTRY_CUDA_CHECK(cudaEventRecord(s.copied, state_->copy_stream));
  s.shape = host.shape();
  state_->next_start = (state_->next_start + 1) % kSlots;
  ++state_->pending;
}

Tensor BatchUploader::TakeReady() {
  CHECK_GT(state_->pending, 0) << "BatchUploader: no batch started";
  // The caller is done with the batch it took last: work queued on the compute stream
  // so far is all that reads it.
  if (state_->last_taken >= 0) {
    GANTRY_CUDA_CHECK(cudaEventRecord(state_->slots[static_cast<size_t>(state_->last_taken)].released, Compute()));
  }
  Slot& s = state_->slots[static_cast<size_t>(state_->next_take)];
  GANTRY_CUDA_CHECK(cudaStreamWaitEvent(Compute(), s.copied, 0));
  state_->last_taken = state_->next_take;
  state_->next_take = (state_->next_take + 1) % kSlots;
  --state_->pending;
  return s.device.ViewAt(0, s.shape);
}

int BatchUploader::pending() const { return state_->pending; }

}  // namespace gantry::cuda
