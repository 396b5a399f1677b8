#include "worker/tensor/cpu/lowered_conv.h"

#include <algorithm>
#include <vector>

#include "common/check.h"
#include "worker/tensor/cpu/conv_lowering.h"
#include "worker/tensor/cpu/grow_buffer.h"
#include "worker/tensor/cpu/swap_leading_dims.h"

namespace gantry {
namespace {

// Per-thread scratch (ranks may run as threads sharing one backend): the column matrix
// and a channel-major chunk.
struct LoweredScratch {
  std::vector<float> cols, channel_major;
};
LoweredScratch& ThreadLoweredScratch() {
  thread_local LoweredScratch scratch;
  return scratch;
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

void CheckChunk(const ConvProblem& p, int64_t chunk) {
  CheckConvProblem(p);
  CHECK(chunk >= 1 && chunk <= p.batch) << "chunk of " << chunk << " samples for " << p.ToString();
}

// What each lowered pass shares: the problem's geometry and this thread's scratch, sized
// for `chunk` samples (the channel-major buffer only when a chunk holds several).
struct Lowering {
  ConvGeometry g;
  int64_t rows, pixels, out;
  float* cols;
  float* channel_major;
};
Lowering PrepareLowering(const ConvProblem& p, int64_t chunk) {
  CheckChunk(p, chunk);
  LoweredScratch& s = ThreadLoweredScratch();
  Lowering l{.g = LoweringGeometry(p), .rows = 0, .pixels = 0, .out = p.out_channels, .cols = nullptr,
             .channel_major = nullptr};
  l.rows = l.g.col_rows();
  l.pixels = l.g.col_cols();
  l.cols = GrowBuffer(s.cols, l.rows * l.pixels * chunk);
  if (chunk > 1) l.channel_major = GrowBuffer(s.channel_major, l.out * l.pixels * chunk);
  return l;
}

}  // namespace

int64_t ColumnFloatsPerSample(const ConvProblem& p) {
  const ConvGeometry g = LoweringGeometry(p);
  return g.col_rows() * g.col_cols();
}

// Each pass below first takes a kernel over the whole unpadded input
// (ConvProblem::kernel_covers_input, one output pixel): a sample's column is its input as
// it lies in memory (c, y, x is the kernel's c, ky, kx order), so the batch's inputs
// [batch, in * k * k] are the column matrix transposed and the pass is one GEMM over the
// whole batch, with no im2col (which costs a call per kernel row per sample).
void LoweredConvForward(const ConvProblem& p, int64_t chunk, const float* x, const float* w, float* y,
                        const LoweringGemm& gemm) {
  if (p.kernel_covers_input()) {
    CheckChunk(p, chunk);
    // y [batch, out] = x [batch, rows] * W^T.
    const int64_t rows = p.in_image_size();
    gemm(false, true, p.batch, p.out_channels, rows, 1.0f, x, rows, w, rows, 0.0f, y, p.out_channels);
    return;
  }
  const Lowering l = PrepareLowering(p, chunk);
  const ConvGeometry& g = l.g;
  const int64_t rows = l.rows, pixels = l.pixels, out = l.out;
  float* cols = l.cols;
  float* y_cm = l.channel_major;
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    LowerChunk(g, m, x + i0 * p.in_image_size(), p.in_image_size(), cols);
    // [out, m*pixels] = W [out, rows] * cols [rows, m*pixels], then back to NCHW (one
    // sample's product already is).
    float* y_chunk = y + i0 * p.out_image_size();
    float* product = m == 1 ? y_chunk : y_cm;
    gemm(false, false, out, wide, rows, 1.0f, w, rows, cols, wide, 0.0f, product, wide);
    if (m > 1) SwapLeadingDims(out, m, pixels, y_cm, y_chunk);
  }
}

void LoweredConvBackwardData(const ConvProblem& p, int64_t chunk, const float* dy, const float* w, float* dx,
                             const LoweringGemm& gemm) {
  if (p.kernel_covers_input()) {
    CheckChunk(p, chunk);
    // dx [batch, rows] = dy [batch, out] * W [out, rows].
    const int64_t rows = p.in_image_size();
    gemm(false, false, p.batch, rows, p.out_channels, 1.0f, dy, p.out_channels, w, rows, 0.0f, dx, rows);
    return;
  }
  const Lowering l = PrepareLowering(p, chunk);
  const ConvGeometry& g = l.g;
  const int64_t rows = l.rows, pixels = l.pixels, out = l.out;
  float* cols = l.cols;
  float* dy_cm = l.channel_major;
  std::fill_n(dx, p.batch * p.in_image_size(), 0.0f);  // Col2Im accumulates
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    const float* dy_chunk = ChannelMajor(m, out, pixels, dy + i0 * p.out_image_size(), dy_cm);
    // dcols [rows, m*pixels] = W^T dy_chunk, scattered back onto each input image.
    gemm(true, false, rows, wide, out, 1.0f, w, rows, dy_chunk, wide, 0.0f, cols, wide);
    ScatterChunk(g, m, cols, dx + i0 * p.in_image_size(), p.in_image_size());
  }
}

void LoweredConvBackwardWeights(const ConvProblem& p, int64_t chunk, const float* x, const float* dy, float* dw,
                                const LoweringGemm& gemm) {
  if (p.kernel_covers_input()) {
    CheckChunk(p, chunk);
    // dW [out, rows] += dy^T [out, batch] * x [batch, rows].
    const int64_t rows = p.in_image_size();
    gemm(true, false, p.out_channels, rows, p.batch, 1.0f, dy, p.out_channels, x, rows, 1.0f, dw, rows);
    return;
  }
  const Lowering l = PrepareLowering(p, chunk);
  const ConvGeometry& g = l.g;
  const int64_t rows = l.rows, pixels = l.pixels, out = l.out;
  float* cols = l.cols;
  float* dy_cm = l.channel_major;
  for (int64_t i0 = 0; i0 < p.batch; i0 += chunk) {
    const int64_t m = std::min(chunk, p.batch - i0), wide = m * pixels;
    const float* dy_chunk = ChannelMajor(m, out, pixels, dy + i0 * p.out_image_size(), dy_cm);
    // dW [out, rows] += dy_chunk [out, m*pixels] * cols^T: one GEMM sums over the chunk.
    LowerChunk(g, m, x + i0 * p.in_image_size(), p.in_image_size(), cols);
    gemm(false, true, out, rows, wide, 1.0f, dy_chunk, wide, cols, wide, 1.0f, dw, rows);
  }
}

}  // namespace gantry
