// BCE on logits and L1, as worker/tensor/cpu/loss.cc: the loss summed in double (one
// block, fixed order, so deterministic) and copied back as the mean; gradients per
// element. The losses are per-batch scalars over a few hundred logits (or one image per
// sample for L1), so one block is enough.
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

constexpr int kLossThreads = 1024;

__global__ void BceKernel(int64_t count, const float* logits, float target, float inv_count, float* dlogits,
                          double* sum_out) {
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const float x = logits[i];
    sum += static_cast<double>(fmaxf(x, 0.0f) - x * target) + log1p(exp(-fabs(static_cast<double>(x))));
    if (dlogits != nullptr) {
      const float e = expf(-fabsf(x));
      const float sigmoid = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
      dlogits[i] = (sigmoid - target) * inv_count;
    }
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) *sum_out = sum;
}

__global__ void L1Kernel(int64_t count, const float* pred, const float* target, float inv_count, float* dpred,
                         double* sum_out) {
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    sum += fabs(static_cast<double>(pred[i]) - target[i]);
    if (dpred != nullptr) {
      const float d = pred[i] - target[i];
      dpred[i] = d > 0.0f ? inv_count : (d < 0.0f ? -inv_count : 0.0f);
    }
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) *sum_out = sum;
}

// Copies the device sum back (waiting for the stream) and returns sum / count.
double MeanFromDevice(const double* device_sum, int64_t count, cudaStream_t stream) {
  double sum = 0.0;
  const cudaError_t err = cudaMemcpyAsync(&sum, device_sum, sizeof(double), cudaMemcpyDeviceToHost, stream);
  CHECK(err == cudaSuccess) << "loss copy-back: " << cudaGetErrorString(err);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  CHECK(sync == cudaSuccess) << "loss: " << cudaGetErrorName(sync) << " (" << cudaGetErrorString(sync) << ")";
  return sum / static_cast<double>(count);
}

// A device double for a loss sum; cached per thread (a loss runs every step).
double* LossSum(cudaStream_t stream) {
  thread_local double* sum = [] {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, sizeof(double));
    CHECK(err == cudaSuccess) << "cudaMalloc(loss sum): " << cudaGetErrorString(err);
    return static_cast<double*>(p);
  }();
  return sum;
}

}  // namespace

double BceWithLogits(int64_t count, const float* logits, float target, float* dlogits, cudaStream_t stream) {
  double* sum = LossSum(stream);
  BceKernel<<<1, kLossThreads, 0, stream>>>(count, logits, target, 1.0f / static_cast<float>(count), dlogits, sum);
  GANTRY_CUDA_LAUNCHED("BceWithLogits");
  return MeanFromDevice(sum, count, stream);
}

double L1Loss(int64_t count, const float* pred, const float* target, float* dpred, cudaStream_t stream) {
  double* sum = LossSum(stream);
  L1Kernel<<<1, kLossThreads, 0, stream>>>(count, pred, target, 1.0f / static_cast<float>(count), dpred, sum);
  GANTRY_CUDA_LAUNCHED("L1Loss");
  return MeanFromDevice(sum, count, stream);
}

}  // namespace gantry::cuda
