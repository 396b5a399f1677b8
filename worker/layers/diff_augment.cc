#include "worker/layers/diff_augment.h"

#include <algorithm>
#include <cstring>

#include "worker/tensor/random.h"

namespace gantry {
namespace {

// Counter slots per row: one per AugmentDraw field, room for one more transform.
constexpr uint64_t kSlotsPerRow = 8;
enum Slot : uint64_t { kBrightness, kSaturation, kContrast, kShiftY, kShiftX, kCutTop, kCutLeft };

// The fields of an AugmentDraw as a row of floats (the cache's tensor). The integers are
// image coordinates, far below 2^24, so they survive exactly.
constexpr int64_t kDrawFloats = 7;

// An integer uniform in [lo, hi] from a uniform u in [0, 1).
int64_t UniformInt(float u, int64_t lo, int64_t hi) {
  const int64_t count = hi - lo + 1;
  return lo + std::min(static_cast<int64_t>(static_cast<double>(u) * static_cast<double>(count)), count - 1);
}

struct ImageSize {
  int64_t channels, height, width;
  int64_t pixels() const { return height * width; }
  int64_t values() const { return channels * height * width; }
};

ImageSize SizeOf(const Tensor& x) {
  CHECK_EQ(x.rank(), 4) << "diff_augment: images are [N, C, H, W], got " << x.shape().ToString();
  CHECK(x.device() == Device::kCpu) << "diff_augment: the images must be in host memory (--augment is CPU-only)";
  return ImageSize{x.dim(1), x.dim(2), x.dim(3)};
}

// The sum of n values in double, in 8 interleaved partial sums (a fixed order the
// compiler can vectorise; one running sum would be latency-bound).
double Sum(const float* v, int64_t n) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lanes[k] += v[i + k];
  }
  double total = 0;
  for (double lane : lanes) total += lane;
  for (; i < n; ++i) total += v[i];
  return total;
}

// mean[p] = the mean over the channels of pixel p of one image.
void PixelMeans(const ImageSize& s, const float* x, float* mean) {
  const int64_t hw = s.pixels();
  std::copy(x, x + hw, mean);
  for (int64_t ch = 1; ch < s.channels; ++ch) {
    const float* plane = x + ch * hw;
    for (int64_t p = 0; p < hw; ++p) mean[p] += plane[p];
  }
  const float inv = 1.0f / static_cast<float>(s.channels);
  for (int64_t p = 0; p < hw; ++p) mean[p] *= inv;
}

// Brightness, saturation and contrast of one image, x -> y (y may alias x); `mean` is
// scratch for one plane.
void ColorForward(const AugmentDraw& d, const ImageSize& s, const float* x, float* y, float* mean) {
  const int64_t hw = s.pixels();
  // Brightness then saturation: (x + b - m) * s + m with m the channel mean of x + b,
  // which is the channel mean of x plus b.
  PixelMeans(s, x, mean);
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    const float* in = x + ch * hw;
    float* out = y + ch * hw;
    for (int64_t p = 0; p < hw; ++p) out[p] = (in[p] - mean[p]) * d.saturation + (mean[p] + d.brightness);
  }
  // Contrast, around the image's mean.
  const float image_mean = static_cast<float>(Sum(y, s.values()) / static_cast<double>(s.values()));
  for (int64_t i = 0; i < s.values(); ++i) y[i] = (y[i] - image_mean) * d.contrast + image_mean;
}

// The adjoint of ColorForward, on one image's gradient in place; `mean` as there.
void ColorBackward(const AugmentDraw& d, const ImageSize& s, float* g, float* mean) {
  const float image_mean = static_cast<float>(Sum(g, s.values()) / static_cast<double>(s.values()));
  const float spread = (1.0f - d.contrast) * image_mean;
  for (int64_t i = 0; i < s.values(); ++i) g[i] = d.contrast * g[i] + spread;
  const int64_t hw = s.pixels();
  PixelMeans(s, g, mean);
  const float keep = 1.0f - d.saturation;
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    float* plane = g + ch * hw;
    for (int64_t p = 0; p < hw; ++p) plane[p] = d.saturation * plane[p] + keep * mean[p];
  }
}

// dst[c, i, j] = src[c, i + dy, j + dx], 0 where that lies outside (dst must not alias
// src). Its adjoint is Translate by (-dy, -dx).
void Translate(int64_t dy, int64_t dx, const ImageSize& s, const float* src, float* dst) {
  const int64_t h = s.height, w = s.width;
  // The output columns whose source column lies inside: [j0, j1).
  const int64_t j0 = std::clamp<int64_t>(-dx, 0, w), j1 = std::clamp<int64_t>(w - dx, 0, w);
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    for (int64_t i = 0; i < h; ++i) {
      float* out = dst + (ch * h + i) * w;
      const int64_t from = i + dy;
      if (from < 0 || from >= h || j0 >= j1) {
        std::fill(out, out + w, 0.0f);
        continue;
      }
      const float* in = src + (ch * h + from) * w;
      std::fill(out, out + j0, 0.0f);
      std::memcpy(out + j0, in + j0 + dx, static_cast<size_t>(j1 - j0) * sizeof(float));
      std::fill(out + j1, out + w, 0.0f);
    }
  }
}

// Zeroes the part of the draw's cutout rectangle inside the image (its own adjoint).
void CutOut(const AugmentDraw& d, const AugmentGeometry& g, const ImageSize& s, float* y) {
  const int64_t top = std::max<int64_t>(d.cut_top, 0), bottom = std::min(d.cut_top + g.cut_height, s.height);
  const int64_t left = std::max<int64_t>(d.cut_left, 0), right = std::min(d.cut_left + g.cut_width, s.width);
  if (top >= bottom || left >= right) return;
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    for (int64_t i = top; i < bottom; ++i) {
      float* row = y + (ch * s.height + i) * s.width;
      std::fill(row + left, row + right, 0.0f);
    }
  }
}

void CheckDraws(std::span<const AugmentDraw> draws, const Tensor& x) {
  CHECK_EQ(static_cast<int64_t>(draws.size()), x.dim(0)) << "diff_augment: one draw per image";
}

Tensor EncodeDraws(std::span<const AugmentDraw> draws) {
  Tensor t = Tensor::Uninitialized(Shape{static_cast<int64_t>(draws.size()), kDrawFloats});
  float* out = t.data();
  for (const AugmentDraw& d : draws) {
    for (float v : {d.brightness, d.saturation, d.contrast, static_cast<float>(d.shift_y),
                    static_cast<float>(d.shift_x), static_cast<float>(d.cut_top), static_cast<float>(d.cut_left)}) {
      *out++ = v;
    }
  }
  return t;
}

std::vector<AugmentDraw> DecodeDraws(const Tensor& t) {
  CHECK(t.rank() == 2 && t.dim(1) == kDrawFloats) << "diff_augment: cache is not from Forward";
  std::vector<AugmentDraw> draws(static_cast<size_t>(t.dim(0)));
  const float* in = t.data();
  for (AugmentDraw& d : draws) {
    d.brightness = in[0];
    d.saturation = in[1];
    d.contrast = in[2];
    d.shift_y = static_cast<int64_t>(in[3]);
    d.shift_x = static_cast<int64_t>(in[4]);
    d.cut_top = static_cast<int64_t>(in[5]);
    d.cut_left = static_cast<int64_t>(in[6]);
    in += kDrawFloats;
  }
  return draws;
}

}  // namespace

AugmentGeometry AugmentGeometry::For(int64_t height, int64_t width) {
  return AugmentGeometry{height / 8, width / 8, height / 2, width / 2};
}

AugmentDraw DrawAugment(uint64_t seed, int64_t row, int64_t height, int64_t width) {
  CHECK_GE(row, 0);
  auto uniform = [&](Slot slot) { return HashUniform(seed, static_cast<uint64_t>(row) * kSlotsPerRow + slot); };
  const AugmentGeometry g = AugmentGeometry::For(height, width);
  AugmentDraw d;
  d.brightness = uniform(kBrightness) - 0.5f;
  d.saturation = 2.0f * uniform(kSaturation);
  d.contrast = uniform(kContrast) + 0.5f;
  d.shift_y = UniformInt(uniform(kShiftY), -g.max_shift_y, g.max_shift_y);
  d.shift_x = UniformInt(uniform(kShiftX), -g.max_shift_x, g.max_shift_x);
  // The authors' centre: [0, side] for an even cutout, [0, side - 1] for an odd one.
  d.cut_top = UniformInt(uniform(kCutTop), 0, height - g.cut_height % 2) - g.cut_height / 2;
  d.cut_left = UniformInt(uniform(kCutLeft), 0, width - g.cut_width % 2) - g.cut_width / 2;
  return d;
}

Tensor AugmentForward(const AugmentTransforms& t, std::span<const AugmentDraw> draws, const Tensor& x) {
  const ImageSize s = SizeOf(x);
  CheckDraws(draws, x);
  const AugmentGeometry g = AugmentGeometry::For(s.height, s.width);
  Tensor y = Tensor::Uninitialized(x.shape());
  std::vector<float> scratch(t.color && t.translation ? static_cast<size_t>(s.values()) : 0);
  std::vector<float> means(t.color ? static_cast<size_t>(s.pixels()) : 0);
  for (int64_t n = 0; n < x.dim(0); ++n) {
    const AugmentDraw& d = draws[static_cast<size_t>(n)];
    const float* in = x.data() + n * s.values();
    float* out = y.data() + n * s.values();
    if (t.color) {
      // Into the scratch when a translation reads it next, else straight into the output.
      float* colored = t.translation ? scratch.data() : out;
      ColorForward(d, s, in, colored, means.data());
      in = colored;
    }
    if (t.translation) {
      Translate(d.shift_y, d.shift_x, s, in, out);
    } else if (in != out) {
      std::memcpy(out, in, static_cast<size_t>(s.values()) * sizeof(float));
    }
    if (t.cutout) CutOut(d, g, s, out);
  }
  return y;
}

Tensor AugmentBackward(const AugmentTransforms& t, std::span<const AugmentDraw> draws, const Tensor& dy) {
  const ImageSize s = SizeOf(dy);
  CheckDraws(draws, dy);
  const AugmentGeometry g = AugmentGeometry::For(s.height, s.width);
  Tensor dx = Tensor::Uninitialized(dy.shape());
  std::vector<float> scratch(t.cutout && t.translation ? static_cast<size_t>(s.values()) : 0);
  std::vector<float> means(t.color ? static_cast<size_t>(s.pixels()) : 0);
  for (int64_t n = 0; n < dy.dim(0); ++n) {
    const AugmentDraw& d = draws[static_cast<size_t>(n)];
    const float* in = dy.data() + n * s.values();
    float* out = dx.data() + n * s.values();
    // In reverse: cutout, translation, color.
    if (t.translation) {
      if (t.cutout) {
        std::memcpy(scratch.data(), in, static_cast<size_t>(s.values()) * sizeof(float));
        CutOut(d, g, s, scratch.data());
        in = scratch.data();
      }
      Translate(-d.shift_y, -d.shift_x, s, in, out);
    } else {
      std::memcpy(out, in, static_cast<size_t>(s.values()) * sizeof(float));
      if (t.cutout) CutOut(d, g, s, out);
    }
    if (t.color) ColorBackward(d, s, out, means.data());
  }
  return dx;
}

Tensor DiffAugment::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  cache->saved.clear();
  if (!ctx.training || !transforms_.any()) return x;
  const ImageSize s = SizeOf(x);
  std::vector<AugmentDraw> draws;
  draws.reserve(static_cast<size_t>(x.dim(0)));
  for (int64_t n = 0; n < x.dim(0); ++n) draws.push_back(DrawAugment(ctx.dropout_seed, ctx.row_offset + n, s.height, s.width));
  cache->saved = {EncodeDraws(draws)};
  return AugmentForward(transforms_, draws, x);
}

Tensor DiffAugment::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                             bool want_input_grad) {
  if (!want_input_grad) return Tensor();
  // An empty cache means Forward was the identity.
  if (cache.saved.empty()) return dy;
  return AugmentBackward(transforms_, DecodeDraws(cache.saved[0]), dy);
}

}  // namespace gantry
