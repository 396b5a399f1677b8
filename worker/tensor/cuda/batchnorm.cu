// Batch normalisation (x viewed as [n, c, hw], statistics per channel) and its fusions
// with an activation, following worker/tensor/cpu/batchnorm.cc: statistics by two
// passes in double, the per-channel scale gamma / sqrt(var + eps) in double, the
// gradient sums in double, and dx = a*g - b*(x - mean) + d with the same a, b, d.
// Reductions run one block per channel in a fixed order (deterministic results).
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

// Flat index of the t-th element (t < n * hw) of channel ch.
__device__ inline int64_t ChannelElement(int64_t t, int64_t ch, int64_t c, int64_t hw) {
  return ((t / hw) * c + ch) * hw + t % hw;
}

__device__ inline float NormScale(float gamma, float var, float eps) {
  return static_cast<float>(static_cast<double>(gamma) / sqrt(static_cast<double>(var) + eps));
}

// The gradient reaching the normalisation's output (f < 0: dy itself).
__device__ inline float OutputGrad(int f, float slope, float y, float dy) {
  if (f < 0) return dy;
  if (f == kLeakyRelu) return y > 0.0f ? dy : slope * dy;
  return dy * ActivationSlopeAtOutput(f, slope, y);
}

__global__ void StatsKernel(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  const int64_t ch = blockIdx.x, count = n * hw;
  __shared__ double mu;
  double sum = 0.0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) sum += x[ChannelElement(t, ch, c, hw)];
  sum = BlockSum(sum);
  if (threadIdx.x == 0) mu = sum / static_cast<double>(count);
  __syncthreads();
  double sq = 0.0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
    const double dev = static_cast<double>(x[ChannelElement(t, ch, c, hw)]) - mu;
    sq += dev * dev;
  }
  sq = BlockSum(sq);
  if (threadIdx.x == 0) {
    mean[ch] = static_cast<float>(mu);
    var[ch] = static_cast<float>(sq / static_cast<double>(count));
  }
}

// y = f((x - mean) * scale + beta); the scale is recomputed per element (in double, as
// the reference computes it once per channel) rather than staged: it is the same float.
__global__ void ApplyKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean, const float* var,
                            float eps, const float* gamma, const float* beta, int f, float slope, float* y) {
  GRID_STRIDE(i, n * c * hw) {
    const int64_t ch = (i / hw) % c;
    const float v = (x[i] - mean[ch]) * NormScale(gamma[ch], var[ch], eps) + beta[ch];
    y[i] = f < 0 ? v : (f == kLeakyRelu ? (v > 0.0f ? v : slope * v) : ApplyActivation(f, slope, v));
  }
}

// Per channel: the gradient sums, dgamma and dbeta (accumulated), and the coefficients
// a, b, d of the input gradient into coef[ch], coef[c + ch], coef[2c + ch].
__global__ void BackwardSumsKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* y, const float* dy,
                                   const float* mean, const float* var, float eps, const float* gamma, int f,
                                   float slope, float* dgamma, float* dbeta, float* coef) {
  const int64_t ch = blockIdx.x, count = n * hw;
  const double m = mean[ch];
  double sum_dy = 0.0, sum_dy_dev = 0.0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
    const int64_t j = ChannelElement(t, ch, c, hw);
    const double g = OutputGrad(f, slope, y != nullptr ? y[j] : 0.0f, dy[j]);
    sum_dy += g;
    sum_dy_dev += g * (static_cast<double>(x[j]) - m);
  }
  sum_dy = BlockSum(sum_dy);
  sum_dy_dev = BlockSum(sum_dy_dev);
  if (threadIdx.x != 0) return;
  const double invstd = 1.0 / sqrt(static_cast<double>(var[ch]) + eps);
  const double sum_dy_xhat = sum_dy_dev * invstd;
  dgamma[ch] += static_cast<float>(sum_dy_xhat);
  dbeta[ch] += static_cast<float>(sum_dy);
  const double gi = static_cast<double>(gamma[ch]) * invstd;
  coef[ch] = static_cast<float>(gi);
  coef[c + ch] = static_cast<float>(gi * invstd * sum_dy_xhat / static_cast<double>(count));
  coef[2 * c + ch] = static_cast<float>(-gi * sum_dy / static_cast<double>(count));
}

__global__ void InputGradKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* y, const float* dy,
                                const float* mean, int f, float slope, const float* coef, float* dx) {
  GRID_STRIDE(i, n * c * hw) {
    const int64_t ch = (i / hw) % c;
    const float g = OutputGrad(f, slope, y != nullptr ? y[i] : 0.0f, dy[i]);
    dx[i] = coef[ch] * g - coef[c + ch] * (x[i] - mean[ch]) + coef[2 * c + ch];
  }
}

}  // namespace

void BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var, cudaStream_t stream) {
  if (c == 0) return;
  StatsKernel<<<static_cast<unsigned>(c), kThreads, 0, stream>>>(n, c, hw, x, mean, var);
  GANTRY_CUDA_LAUNCHED("BatchNormStats");
}

void BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                const float* var, float eps, const float* gamma, const float* beta, int f,
                                float slope, float* y, cudaStream_t stream) {
  if (n * c * hw == 0) return;
  ApplyKernel<<<BlocksFor(n * c * hw), kThreads, 0, stream>>>(n, c, hw, x, mean, var, eps, gamma, beta, f, slope, y);
  GANTRY_CUDA_LAUNCHED("BatchNormActivationForward");
}

void BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y, const float* dy,
                                 const float* mean, const float* var, float eps, const float* gamma, int f,
                                 float slope, float* dx, float* dgamma, float* dbeta, float* scratch,
                                 cudaStream_t stream) {
  if (c == 0) return;
  BackwardSumsKernel<<<static_cast<unsigned>(c), kThreads, 0, stream>>>(n, c, hw, x, y, dy, mean, var, eps, gamma,
                                                                         f, slope, dgamma, dbeta, scratch);
  GANTRY_CUDA_LAUNCHED("BatchNormBackward sums");
  if (dx == nullptr || n * c * hw == 0) return;
  InputGradKernel<<<BlocksFor(n * c * hw), kThreads, 0, stream>>>(n, c, hw, x, y, dy, mean, f, slope, scratch, dx);
  GANTRY_CUDA_LAUNCHED("BatchNormBackward dx");
}

}  // namespace gantry::cuda
