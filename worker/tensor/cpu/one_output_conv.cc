#include "worker/tensor/cpu/one_output_conv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/check.h"

namespace gantry {
namespace {

// Outputs computed together along a row: one AVX-512 register of floats (two AVX2 ones).
// Rows are padded to whole blocks, so the block loops have fixed trip counts and vectorise.
constexpr int64_t kOneOutputLanes = 16;

// kOneOutputLanes floats as one value (GCC/Clang vector extension; an AVX-512 register with
// -march=native), so accumulators stay in registers; loads and stores are unaligned.
typedef float Lanes __attribute__((vector_size(kOneOutputLanes * sizeof(float))));
Lanes Load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// Lanes p[0], p[s], ..., p[(kOneOutputLanes - 1) * s].
Lanes LoadStrided(const float* p, int64_t s) {
  if (s == 1) return Load(p);
  Lanes v;
  for (int64_t i = 0; i < kOneOutputLanes; ++i) v[i] = p[i * s];
  return v;
}

// Stores the first `width` (<= kOneOutputLanes) lanes of v at p.
void StoreFirst(float* p, Lanes v, int64_t width) {
  if (width == kOneOutputLanes) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  for (int64_t i = 0; i < width; ++i) p[i] = v[i];
}

int64_t RoundUpToLanes(int64_t n) { return (n + kOneOutputLanes - 1) / kOneOutputLanes * kOneOutputLanes; }

struct OneOutputScratch {
  std::vector<float> plane, sums;
  std::vector<Lanes> taps;
};
OneOutputScratch& ThreadOneOutputScratch() {
  thread_local OneOutputScratch scratch;
  return scratch;
}

float* Zeroed(std::vector<float>& buf, int64_t count) {
  buf.assign(static_cast<size_t>(count), 0.0f);
  return buf.data();
}

// The input planes as the forward and backward-weights windows read them:
// padded[r][q] = x[r - padding][q - padding] (0 outside the image), with rows for every
// window and columns for whole blocks of kOneOutputLanes windows.
struct PaddedInput {
  int64_t rows, cols;
  explicit PaddedInput(const ConvProblem& p)
      : rows((p.out_height - 1) * p.stride + p.kernel),
        cols(RoundUpToLanes(p.out_width) * p.stride + p.kernel) {}
  int64_t size() const { return rows * cols; }

  // Copies one H x W plane into the interior of `out` (size() floats); the border is
  // never written, so it stays as zeroed once.
  void Fill(const ConvProblem& p, const float* plane, float* out) const {
    const int64_t last_row = std::min(p.in_height, rows - p.padding);
    const int64_t width = std::min(p.in_width, cols - p.padding);
    for (int64_t r = 0; r < last_row; ++r) {
      std::copy_n(plane + r * p.in_width, width, out + (r + p.padding) * cols + p.padding);
    }
  }
};

}  // namespace

bool OneOutputConvApplies(const ConvProblem& p) { return p.out_channels == 1 && p.padding < p.kernel; }

void OneOutputConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  CHECK(OneOutputConvApplies(p)) << "one-output convolution on " << p.ToString();
  const int64_t k = p.kernel, s = p.stride, oh = p.out_height, ow = p.out_width;
  const int64_t plane = p.in_height * p.in_width;
  const PaddedInput pad(p);
  OneOutputScratch& scratch = ThreadOneOutputScratch();
  float* padded = Zeroed(scratch.plane, pad.size());
  // One sample's output with rows of whole blocks, summed over the channels.
  const int64_t row_width = RoundUpToLanes(ow);
  std::vector<float>& sums = scratch.sums;
  for (int64_t n = 0; n < p.batch; ++n) {
    float* yn = Zeroed(sums, oh * row_width);
    for (int64_t c = 0; c < p.in_channels; ++c) {
      pad.Fill(p, x + (n * p.in_channels + c) * plane, padded);
      const float* wc = w + c * k * k;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox0 = 0; ox0 < ow; ox0 += kOneOutputLanes) {
          Lanes acc = {};
          for (int64_t ky = 0; ky < k; ++ky) {
            const float* row = padded + (oy * s + ky) * pad.cols + ox0 * s;
            for (int64_t kx = 0; kx < k; ++kx) acc += wc[ky * k + kx] * LoadStrided(row + kx, s);
          }
          float* out = yn + oy * row_width + ox0;
          acc += Load(out);
          std::memcpy(out, &acc, sizeof acc);
        }
      }
    }
    for (int64_t oy = 0; oy < oh; ++oy) std::copy_n(yn + oy * row_width, ow, y + (n * oh + oy) * ow);
  }
}

void OneOutputConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  CHECK(OneOutputConvApplies(p)) << "one-output convolution on " << p.ToString();
  const int64_t k = p.kernel, s = p.stride, h = p.in_height, wd = p.in_width;
  // dy dilated by the stride and padded: dilated[oy*s + k-1-p][ox*s + k-1-p] = dy[oy][ox],
  // 0 elsewhere, so dx[iy][ix] = sum over ky, kx of w[ky][kx] * dilated[iy-ky+k-1][ix-kx+k-1]
  // (the windows that cover (iy, ix)). Rows and columns for every read of whole blocks.
  const int64_t rows = h + k - 1, cols = RoundUpToLanes(wd) + k - 1, shift = k - 1 - p.padding;
  float* dilated = Zeroed(ThreadOneOutputScratch().plane, rows * cols);
  for (int64_t n = 0; n < p.batch; ++n) {
    const float* dyn = dy + n * p.out_height * p.out_width;
    std::fill_n(dilated, rows * cols, 0.0f);
    for (int64_t oy = 0; oy < p.out_height; ++oy) {
      for (int64_t ox = 0; ox < p.out_width; ++ox) {
        dilated[(oy * s + shift) * cols + ox * s + shift] = dyn[oy * p.out_width + ox];
      }
    }
    for (int64_t c = 0; c < p.in_channels; ++c) {
      const float* wc = w + c * k * k;
      float* dxc = dx + (n * p.in_channels + c) * h * wd;
      for (int64_t iy = 0; iy < h; ++iy) {
        for (int64_t ix0 = 0; ix0 < wd; ix0 += kOneOutputLanes) {
          Lanes acc = {};
          for (int64_t ky = 0; ky < k; ++ky) {
            const float* row = dilated + (iy - ky + k - 1) * cols + ix0 + k - 1;
            for (int64_t kx = 0; kx < k; ++kx) acc += wc[ky * k + kx] * Load(row - kx);
          }
          StoreFirst(dxc + iy * wd + ix0, acc, std::min(kOneOutputLanes, wd - ix0));
        }
      }
    }
  }
}

void OneOutputConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  CHECK(OneOutputConvApplies(p)) << "one-output convolution on " << p.ToString();
  const int64_t k = p.kernel, kk = k * k, s = p.stride, oh = p.out_height, ow = p.out_width;
  const int64_t plane = p.in_height * p.in_width, row_width = RoundUpToLanes(ow);
  const PaddedInput pad(p);
  OneOutputScratch& scratch = ThreadOneOutputScratch();
  // Every sample's dy with rows padded to whole blocks (0 past the last window), then one
  // sample's padded input plane.
  std::vector<float> grads(static_cast<size_t>(p.batch * oh * row_width), 0.0f);
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      std::copy_n(dy + (n * oh + oy) * ow, ow, grads.data() + (n * oh + oy) * row_width);
    }
  }
  float* padded = Zeroed(scratch.plane, pad.size());
  std::vector<Lanes>& acc = scratch.taps;  // per tap, one partial sum per lane
  acc.resize(static_cast<size_t>(kk));
  for (int64_t c = 0; c < p.in_channels; ++c) {
    std::fill(acc.begin(), acc.end(), Lanes{});
    for (int64_t n = 0; n < p.batch; ++n) {
      pad.Fill(p, x + (n * p.in_channels + c) * plane, padded);
      const float* dn = grads.data() + n * oh * row_width;
      // One tap at a time over the whole plane (both planes stay in L1), so its sum is
      // one register.
      for (int64_t ky = 0; ky < k; ++ky) {
        for (int64_t kx = 0; kx < k; ++kx) {
          Lanes a = acc[static_cast<size_t>(ky * k + kx)];
          for (int64_t oy = 0; oy < oh; ++oy) {
            const float* row = padded + (oy * s + ky) * pad.cols + kx;
            for (int64_t ox0 = 0; ox0 < ow; ox0 += kOneOutputLanes) {
              a += Load(dn + oy * row_width + ox0) * LoadStrided(row + ox0 * s, s);
            }
          }
          acc[static_cast<size_t>(ky * k + kx)] = a;
        }
      }
    }
    for (int64_t t = 0; t < kk; ++t) {
      float sum = 0.0f;
      for (int64_t i = 0; i < kOneOutputLanes; ++i) sum += acc[static_cast<size_t>(t)][i];
      dw[c * kk + t] += sum;
    }
  }
}

}  // namespace gantry
