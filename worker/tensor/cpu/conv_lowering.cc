#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/conv_lowering.h"

namespace gantry {
namespace {

// Floor and ceiling of num / den for den > 0 and a numerator of either sign.
int64_t FloorDiv(int64_t num, int64_t den) { return num >= 0 ? num / den : -((-num + den - 1) / den); }
int64_t CeilDiv(int64_t num, int64_t den) { return -FloorDiv(-num, den); }

// The column positions [lo, hi) whose image coordinate pos * stride - padding + offset
// lies inside [0, size): the only ones that touch the image, so the inner loops run
// without bounds tests.
struct Span {
  int64_t lo;
  int64_t hi;
};

Span ValidSpan(int64_t positions, int64_t size, int64_t stride, int64_t padding, int64_t offset) {
  const int64_t lo = std::clamp<int64_t>(CeilDiv(padding - offset, stride), 0, positions);
  const int64_t hi = std::clamp<int64_t>(FloorDiv(size - 1 + padding - offset, stride) + 1, lo, positions);
  return {lo, hi};
}

void CheckGeometry(const ConvGeometry& g) {
  CHECK(g.channels > 0 && g.height > 0 && g.width > 0 && g.kernel > 0 && g.stride > 0 && g.padding >= 0)
      << "bad conv geometry: c=" << g.channels << " h=" << g.height << " w=" << g.width << " k=" << g.kernel
      << " s=" << g.stride << " p=" << g.padding;
  CHECK(g.out_height > 0 && g.out_width > 0) << "out " << g.out_height << "x" << g.out_width;
  CHECK(g.cols_stride == 0 || g.cols_stride >= g.col_cols())
      << "cols_stride " << g.cols_stride << " < " << g.col_cols() << " columns";
}

// Calls visit(col_row_ptr, image_ptr, count) for every in-image run of one column row
// segment: col_row_ptr[j] pairs with image_ptr[j * stride] for j in [0, count).
// Column elements outside every run are passed to skip(ptr, count) (Im2Col zeroes them).
// Column rows are g.col_stride() apart; only their first col_cols() elements are visited.
template <typename Col, typename Img, typename Visit, typename Skip>
void ForEachRun(const ConvGeometry& g, Col* cols, Img* image, Visit visit, Skip skip) {
  const int64_t k = g.kernel, s = g.stride, p = g.padding;
  const int64_t ho = g.out_height, wo = g.out_width;
  for (int64_t c = 0; c < g.channels; ++c) {
    Img* plane = image + c * g.height * g.width;
    for (int64_t ky = 0; ky < k; ++ky) {
      const Span ys = ValidSpan(ho, g.height, s, p, ky);
      for (int64_t kx = 0; kx < k; ++kx) {
        const Span xs = ValidSpan(wo, g.width, s, p, kx);
        Col* row = cols + ((c * k + ky) * k + kx) * g.col_stride();
        skip(row, ys.lo * wo);
        skip(row + ys.hi * wo, (ho - ys.hi) * wo);
        for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
          Col* out = row + oy * wo;
          skip(out, xs.lo);
          skip(out + xs.hi, wo - xs.hi);
          Img* src = plane + (oy * s - p + ky) * g.width + (xs.lo * s - p + kx);
          visit(out + xs.lo, src, xs.hi - xs.lo);
        }
      }
    }
  }
}

}  // namespace

GANTRY_VECTOR_CLONES
void Im2Col(const ConvGeometry& g, const float* image, float* cols) {
  CheckGeometry(g);
  const int64_t s = g.stride;
  auto copy = [s](float* dst, const float* src, int64_t count) {
    if (s == 1) {
      std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
      return;
    }
    for (int64_t j = 0; j < count; ++j) dst[j] = src[j * s];
  };
  auto zero = [](float* dst, int64_t count) { std::fill_n(dst, count, 0.0f); };
  ForEachRun(g, cols, image, copy, zero);
}

ConvGeometry LoweringGeometry(const ConvProblem& p) {
  return ConvGeometry{.channels = p.in_channels,
                      .height = p.in_height,
                      .width = p.in_width,
                      .kernel = p.kernel,
                      .stride = p.stride,
                      .padding = p.padding,
                      .out_height = p.out_height,
                      .out_width = p.out_width};
}

GANTRY_VECTOR_CLONES
void Col2Im(const ConvGeometry& g, const float* cols, float* image) {
  CheckGeometry(g);
  const int64_t s = g.stride;
  auto add = [s](const float* src, float* dst, int64_t count) {
    if (s == 1) {
      for (int64_t j = 0; j < count; ++j) dst[j] += src[j];
      return;
    }
    for (int64_t j = 0; j < count; ++j) dst[j * s] += src[j];
  };
  auto ignore = [](const float*, int64_t) {};
  ForEachRun(g, cols, image, add, ignore);
}

}  // namespace gantry
