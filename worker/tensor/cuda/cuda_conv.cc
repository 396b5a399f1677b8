// CudaBackend's convolutions: im2col + cuBLAS over chunks of the batch, the operands
// first rounded to the problem's precision (16-bit operands are lowered as 16-bit, so
// the column matrix is half the bytes and the GEMMs run on the tensor cores).
//   forward:          cols_j = im2col(x_j);       y_j = W cols_j       (batched GEMM)
//   backward-data:    dcols_j = W^T dy_j;         dx_j = col2im(dcols_j)
//   backward-weights: dW += dy_cm cols_wide^T     (one GEMM, k = samples * pixels)
// where dy_cm is the chunk of dy in channel-major [out, m, pixels] and cols_wide the
// chunk's column matrices side by side.
#include <algorithm>

#include "common/check.h"
#include "worker/tensor/cuda/cublas_gemm.h"
#include "worker/tensor/cuda/cuda_backend.h"
#include "worker/tensor/cuda/cuda_kernels.h"
#include "worker/tensor/cuda/cuda_memory.h"
#include "worker/tensor/cuda/operands.h"

namespace gantry {
namespace {

// The column matrix of one chunk holds at most this many elements (256 MB in fp32):
// the whole DCGAN batch at 512 fits in a few chunks, and memory stays bounded.
constexpr int64_t kMaxColumnElements = int64_t{64} << 20;

cudaStream_t ConvStream() { return static_cast<cudaStream_t>(cuda::ComputeStream()); }

cuda::Lowering LoweringOf(const ConvProblem& p) {
  return {p.in_channels, p.in_height, p.in_width, p.kernel, p.stride, p.padding, p.out_height, p.out_width};
}

int64_t ColRows(const ConvProblem& p) { return p.in_channels * p.kernel * p.kernel; }
int64_t Pixels(const ConvProblem& p) { return p.out_height * p.out_width; }

int64_t ChunkSamples(const ConvProblem& p) {
  return std::clamp<int64_t>(kMaxColumnElements / (ColRows(p) * Pixels(p)), 1, p.batch);
}

// `count` floats at `precision`: the data itself for fp32, else rounded into `scratch`.
const void* Operand(MathPrecision precision, int64_t count, const float* src, cuda::DeviceBuffer& scratch) {
  int64_t ld = 0;
  return cuda::MatrixOperand(precision, 1, count, src, count, scratch, &ld);
}

// im2col of m samples starting at `images` (operand type of `precision`).
void CudaLowerChunk(MathPrecision precision, const ConvProblem& p, int64_t m, const void* images, bool wide,
                    void* cols) {
  const cuda::Lowering g = LoweringOf(p);
  switch (precision) {
    case MathPrecision::kFp32:
      cuda::Im2Col(g, m, static_cast<const float*>(images), wide, static_cast<float*>(cols), ConvStream());
      return;
    case MathPrecision::kBf16:
      cuda::Im2Col(g, m, static_cast<const __nv_bfloat16*>(images), wide, static_cast<__nv_bfloat16*>(cols),
                   ConvStream());
      return;
    case MathPrecision::kFp16:
      cuda::Im2Col(g, m, static_cast<const __half*>(images), wide, static_cast<__half*>(cols), ConvStream());
      return;
  }
}

void SwapChunk(MathPrecision precision, int64_t a, int64_t b, int64_t pixels, const void* src, void* dst) {
  switch (precision) {
    case MathPrecision::kFp32:
      cuda::SwapLeadingDims(a, b, pixels, static_cast<const float*>(src), static_cast<float*>(dst), ConvStream());
      return;
    case MathPrecision::kBf16:
      cuda::SwapLeadingDims(a, b, pixels, static_cast<const __nv_bfloat16*>(src), static_cast<__nv_bfloat16*>(dst),
                            ConvStream());
      return;
    case MathPrecision::kFp16:
      cuda::SwapLeadingDims(a, b, pixels, static_cast<const __half*>(src), static_cast<__half*>(dst), ConvStream());
      return;
  }
}

const void* Advance(const void* base, MathPrecision precision, int64_t elements) {
  return static_cast<const char*>(base) + elements * static_cast<int64_t>(cuda::OperandBytes(precision));
}

}  // namespace

void CudaBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  const MathPrecision prec = p.precision;
  const cudaDataType_t type = cuda::OperandType(prec);
  const size_t esize = cuda::OperandBytes(prec);
  cuda::DeviceBuffer x_scratch, w_scratch;
  const void* xs = Operand(prec, p.batch * p.in_image_size(), x, x_scratch);
  const void* ws = Operand(prec, p.weight_size(), w, w_scratch);
  const int64_t rows = ColRows(p), pixels = Pixels(p), chunk = ChunkSamples(p);
  cuda::DeviceBuffer cols(static_cast<size_t>(chunk * rows * pixels) * esize);
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0);
    CudaLowerChunk(prec, p, m, Advance(xs, prec, i0 * p.in_image_size()), /*wide=*/false, cols.as<void>());
    // y_j [out, pixels] = W [out, rows] * cols_j [rows, pixels], W shared by the batch.
    cuda::RowMajorGemm(false, false, p.out_channels, pixels, rows, 1.0f, {ws, type, rows, 0},
                       {cols.as<void>(), type, pixels, rows * pixels}, 0.0f, y + i0 * p.out_image_size(), pixels,
                       p.out_image_size(), m);
  }
}

void CudaBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  const MathPrecision prec = p.precision;
  const cudaDataType_t type = cuda::OperandType(prec);
  cuda::DeviceBuffer dy_scratch, w_scratch;
  const void* dys = Operand(prec, p.batch * p.out_image_size(), dy, dy_scratch);
  const void* ws = Operand(prec, p.weight_size(), w, w_scratch);
  const int64_t rows = ColRows(p), pixels = Pixels(p), chunk = ChunkSamples(p);
  cuda::DeviceBuffer dcols(static_cast<size_t>(chunk * rows * pixels) * sizeof(float));
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0);
    // dcols_j [rows, pixels] = W^T [rows, out] * dy_j [out, pixels].
    cuda::RowMajorGemm(true, false, rows, pixels, p.out_channels, 1.0f, {ws, type, rows, 0},
                       {Advance(dys, prec, i0 * p.out_image_size()), type, pixels, p.out_image_size()}, 0.0f,
                       dcols.as<float>(), pixels, rows * pixels, m);
    cuda::Col2Im(LoweringOf(p), m, dcols.as<float>(), dx + i0 * p.in_image_size(), ConvStream());
  }
}

void CudaBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  const MathPrecision prec = p.precision;
  const cudaDataType_t type = cuda::OperandType(prec);
  const size_t esize = cuda::OperandBytes(prec);
  cuda::DeviceBuffer x_scratch, dy_scratch;
  const void* xs = Operand(prec, p.batch * p.in_image_size(), x, x_scratch);
  const void* dys = Operand(prec, p.batch * p.out_image_size(), dy, dy_scratch);
  const int64_t rows = ColRows(p), pixels = Pixels(p), chunk = ChunkSamples(p), out = p.out_channels;
  cuda::DeviceBuffer cols(static_cast<size_t>(chunk * rows * pixels) * esize);
  cuda::DeviceBuffer dy_cm(static_cast<size_t>(chunk * out * pixels) * esize);
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    CudaLowerChunk(prec, p, m, Advance(xs, prec, i0 * p.in_image_size()), /*wide=*/true, cols.as<void>());
    SwapChunk(prec, m, out, pixels, Advance(dys, prec, i0 * p.out_image_size()), dy_cm.as<void>());
    // dW [out, rows] += dy_cm [out, m*pixels] * cols_wide^T [m*pixels, rows].
    cuda::RowMajorGemm(false, true, out, rows, wide, 1.0f, {dy_cm.as<void>(), type, wide, 0},
                       {cols.as<void>(), type, wide, 0}, 1.0f, dw, rows, 0, 1);
  }
}

}  // namespace gantry
