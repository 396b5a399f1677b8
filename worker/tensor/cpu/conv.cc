// The reference convolutions: a batch is lowered a chunk of samples at a time, the
// samples' column matrices side by side in one [in*k*k, samples*out_pixels] matrix, so
// one GEMM per chunk has a wide N even where a sample's output is only 7x7. Activations
// and gradients move between NCHW and the channel-major [C, samples, pixels] the GEMM
// reads and writes with SwapLeadingDims (one sample's block already is channel-major).
#include <algorithm>
#include <vector>

#include "common/check.h"
#include "worker/tensor/cpu/conv_lowering.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/cpu/operand_rounding.h"
#include "worker/tensor/cpu/swap_leading_dims.h"

namespace gantry {
namespace {

// Samples per chunk are chosen to make the chunk's GEMM at most about this many columns
// wide. One 7x7 sample gives N = 49, too narrow for Eigen's kernels, so 7 of them go
// together; a 14x14 sample (N = 196) runs alone. Wider chunks let the column and
// channel-major buffers fall out of L2, and the scatter/copy passes around the GEMM then
// slow down more than the GEMM speeds up (measured on the DCGAN layers, batch 64:
// chunks of 4-16 7x7 samples beat both 1 and 64; 14x14 samples gain nothing).
constexpr int64_t kTargetGemmColumns = 384;

// Per-thread scratch (ranks may run as threads sharing one backend): the column matrix,
// a channel-major chunk, and rounded copies of the operands.
struct Scratch {
  std::vector<float> cols, channel_major, round_a, round_b;
};
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The first `count` floats of `buf`, grown (never shrunk) as needed.
float* Reserve(std::vector<float>& buf, int64_t count) {
  if (buf.size() < static_cast<size_t>(count)) buf.resize(static_cast<size_t>(count));
  return buf.data();
}

// The chunk of m samples at `nchw` ([m, channels, pixels]) as [channels, m * pixels]:
// `nchw` itself for one sample, else rearranged into `buf`.
const float* ChannelMajor(int64_t m, int64_t channels, int64_t pixels, const float* nchw, float* buf) {
  if (m == 1) return nchw;
  SwapLeadingDims(m, channels, pixels, nchw, buf);
  return buf;
}

// Im2Col of m images (image_size floats apart) into side-by-side blocks of one
// [rows, m * pixels] column matrix.
void LowerChunk(ConvGeometry g, int64_t m, const float* images, int64_t image_size, float* cols) {
  const int64_t pixels = g.col_cols();
  g.cols_stride = m * pixels;
  for (int64_t j = 0; j < m; ++j) Im2Col(g, images + j * image_size, cols + j * pixels);
}

// The adjoint of LowerChunk: images[j] += col2im(block j of cols).
void ScatterChunk(ConvGeometry g, int64_t m, const float* cols, float* images, int64_t image_size) {
  const int64_t pixels = g.col_cols();
  g.cols_stride = m * pixels;
  for (int64_t j = 0; j < m; ++j) Col2Im(g, cols + j * pixels, images + j * image_size);
}

}  // namespace

// The reference GEMM, also inside a derived backend (a qualified, non-virtual call), on
// operands that are already rounded.
void EigenCpuBackend::EigenGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                int64_t ldc) {
  EigenCpuBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void EigenCpuBackend::set_max_column_floats(int64_t floats) {
  CHECK_GT(floats, 0);
  max_column_floats_ = floats;
}

int64_t EigenCpuBackend::ChunkSamples(const ConvProblem& p) const {
  const ConvGeometry g = LoweringGeometry(p);
  const int64_t wanted = kTargetGemmColumns / g.col_cols();
  const int64_t fit = max_column_floats_ / (g.col_rows() * g.col_cols());
  return std::clamp<int64_t>(std::min(wanted, fit), 1, p.batch);
}

void EigenCpuBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  x = RoundedOperand(p.precision, p.batch * p.in_image_size(), x, s.round_a);
  w = RoundedOperand(p.precision, p.weight_size(), w, s.round_b);
  const ConvGeometry g = LoweringGeometry(p);
  const int64_t rows = g.col_rows(), pixels = g.col_cols(), out = p.out_channels;
  const int64_t chunk = ChunkSamples(p);
  float* cols = Reserve(s.cols, rows * pixels * chunk);
  float* y_cm = chunk > 1 ? Reserve(s.channel_major, out * pixels * chunk) : nullptr;
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    LowerChunk(g, m, x + i0 * p.in_image_size(), p.in_image_size(), cols);
    // [out, m*pixels] = W [out, rows] * cols [rows, m*pixels], then back to NCHW (one
    // sample's product already is).
    float* y_chunk = y + i0 * p.out_image_size();
    float* product = m == 1 ? y_chunk : y_cm;
    EigenGemm(false, false, out, wide, rows, 1.0f, w, rows, cols, wide, 0.0f, product, wide);
    if (m > 1) SwapLeadingDims(out, m, pixels, y_cm, y_chunk);
  }
}

void EigenCpuBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  dy = RoundedOperand(p.precision, p.batch * p.out_image_size(), dy, s.round_a);
  w = RoundedOperand(p.precision, p.weight_size(), w, s.round_b);
  const ConvGeometry g = LoweringGeometry(p);
  const int64_t rows = g.col_rows(), pixels = g.col_cols(), out = p.out_channels;
  const int64_t chunk = ChunkSamples(p);
  float* cols = Reserve(s.cols, rows * pixels * chunk);
  float* dy_cm = chunk > 1 ? Reserve(s.channel_major, out * pixels * chunk) : nullptr;
  std::fill_n(dx, p.batch * p.in_image_size(), 0.0f);  // Col2Im accumulates
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    const float* dy_chunk = ChannelMajor(m, out, pixels, dy + i0 * p.out_image_size(), dy_cm);
    // dcols [rows, m*pixels] = W^T dy_chunk, scattered back onto each input image.
    EigenGemm(true, false, rows, wide, out, 1.0f, w, rows, dy_chunk, wide, 0.0f, cols, wide);
    ScatterChunk(g, m, cols, dx + i0 * p.in_image_size(), p.in_image_size());
  }
}

void EigenCpuBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  x = RoundedOperand(p.precision, p.batch * p.in_image_size(), x, s.round_a);
  dy = RoundedOperand(p.precision, p.batch * p.out_image_size(), dy, s.round_b);
  const ConvGeometry g = LoweringGeometry(p);
  const int64_t rows = g.col_rows(), pixels = g.col_cols(), out = p.out_channels;
  const int64_t chunk = ChunkSamples(p);
  float* cols = Reserve(s.cols, rows * pixels * chunk);
  float* dy_cm = chunk > 1 ? Reserve(s.channel_major, out * pixels * chunk) : nullptr;
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    const float* dy_chunk = ChannelMajor(m, out, pixels, dy + i0 * p.out_image_size(), dy_cm);
    // dW [out, rows] += dy_chunk [out, m*pixels] * cols^T: one GEMM sums over the chunk.
    LowerChunk(g, m, x + i0 * p.in_image_size(), p.in_image_size(), cols);
    EigenGemm(false, true, out, rows, wide, 1.0f, dy_chunk, wide, cols, wide, 1.0f, dw, rows);
  }
}

}  // namespace gantry
