#include "tests/testing/synthetic_images.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "worker/tensor/random.h"

namespace gantry::testing {
namespace {

constexpr double kPi = 3.14159265358979323846;

using Rgb = std::array<double, 3>;

double Fract(double x) { return x - std::floor(x); }

// HSV (each in [0, 1]) to RGB in [0, 1].
Rgb FromHsv(double h, double s, double v) {
  const double hh = Fract(h) * 6.0;
  const int sector = static_cast<int>(hh) % 6;
  const double f = hh - std::floor(hh);
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (sector) {
    case 0: return {v, t, p};
    case 1: return {q, v, p};
    case 2: return {p, v, t};
    case 3: return {p, q, v};
    case 4: return {t, p, v};
    default: return {v, p, q};
  }
}

// Signed distance (pixels; negative inside) of (dx, dy) from the shape of kind `k`
// centred at 0 with size r.
double ShapeDistance(int64_t k, double dx, double dy, double r) {
  const double ax = std::abs(dx), ay = std::abs(dy);
  switch (k % 6) {
    case 0: return std::hypot(dx, dy) - r;                                      // disc
    case 1: return std::max(ax, ay) - 0.85 * r;                                 // square
    case 2: return std::max(dy - 0.5 * r, ax * std::sqrt(3.0) / 2 - dy / 2 - r / 2);  // triangle, apex up
    case 3: return std::abs(std::hypot(dx, dy) - 0.7 * r) - 0.3 * r;            // ring
    case 4: return std::min(std::max(ax - r, ay - r / 3), std::max(ax - r / 3, ay - r));  // cross
    default: return (ax + ay) / std::sqrt(2.0) - 0.8 * r;                       // diamond
  }
}

// One picture of kind k into `out` (channels x side x side).
void DrawKind(int64_t k, int64_t kinds, int64_t channels, int64_t side, Rng& rng, float* out) {
  const double hue = Fract(0.6180339887 * static_cast<double>(k) + 0.05) + 0.04 * (rng.Uniform() - 0.5);
  const Rgb fg = FromHsv(hue, 0.85, 0.75 + 0.2 * rng.Uniform());
  const Rgb bg_a = FromHsv(hue + 0.5, 0.45, 0.45), bg_b = FromHsv(hue + 0.35, 0.6, 0.12);
  const double angle = 2 * kPi * static_cast<double>(k) / static_cast<double>(kinds) + 0.5 * (rng.Uniform() - 0.5);
  const double cx = side * (0.5 + 0.24 * (rng.Uniform() - 0.5)), cy = side * (0.5 + 0.24 * (rng.Uniform() - 0.5));
  const double r = side * (0.2 + 0.1 * rng.Uniform());
  const double stripe_cycles = 2.0 + static_cast<double>(k % 3);  // across the shape
  const double stripe_angle = kPi * static_cast<double>(k % 4) / 4.0;
  const double stripe_phase = 2 * kPi * rng.Uniform();
  const double s = static_cast<double>(side);
  for (int64_t y = 0; y < side; ++y) {
    for (int64_t x = 0; x < side; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      // Background: a gradient along `angle` through the image centre.
      const double g = std::clamp(0.5 + ((px - s / 2) * std::cos(angle) + (py - s / 2) * std::sin(angle)) / s, 0.0, 1.0);
      // Shape: antialiased over one pixel, striped.
      const double inside = std::clamp(0.5 - ShapeDistance(k, px - cx, py - cy, r), 0.0, 1.0);
      const double u = ((px - cx) * std::cos(stripe_angle) + (py - cy) * std::sin(stripe_angle)) / (2 * r);
      const double stripe = 0.82 + 0.18 * std::sin(2 * kPi * stripe_cycles * u + stripe_phase);
      Rgb c;
      for (int i = 0; i < 3; ++i) {
        const double back = bg_a[i] * (1 - g) + bg_b[i] * g;
        c[i] = back * (1 - inside) + fg[i] * stripe * inside;
      }
      const double grey = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
      for (int64_t ch = 0; ch < channels; ++ch) {
        const double v = channels == 1 ? grey : c[ch];
        out[(ch * side + y) * side + x] = static_cast<float>(std::clamp(2 * v - 1 + 0.02 * rng.Normal(), -1.0, 1.0));
      }
    }
  }
}

ImageDataset EmptySet(int64_t count, int64_t channels, int64_t side) {
  ImageDataset d;
  d.count = count;
  d.channels = channels;
  d.height = d.width = side;
  d.images_path = "synthetic images";
  d.pixels.resize(static_cast<size_t>(count * channels * side * side));
  d.labels.resize(static_cast<size_t>(count));
  return d;
}

float Clamped(double v) { return static_cast<float>(std::clamp(v, -1.0, 1.0)); }

// One Gaussian-blurred line of n values at stride `step` (edges clamped), in place.
void BlurLine(float* line, int64_t n, int64_t step, const std::vector<double>& kernel, std::vector<double>& scratch) {
  const int64_t radius = static_cast<int64_t>(kernel.size()) / 2;
  scratch.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    for (int64_t j = -radius; j <= radius; ++j) v += kernel[j + radius] * line[std::clamp(i + j, int64_t{0}, n - 1) * step];
    scratch[i] = v;
  }
  for (int64_t i = 0; i < n; ++i) line[i * step] = Clamped(scratch[i]);
}

}  // namespace

ImageDataset SyntheticImages(int64_t count, const SyntheticImageSpec& spec, uint64_t seed) {
  ImageDataset d = EmptySet(count, spec.channels, spec.side);
  const int64_t drawn = spec.kinds_drawn > 0 ? std::min(spec.kinds_drawn, spec.kinds) : spec.kinds;
  Rng rng(Mix64(seed ^ 0x73796e7468ull));  // "synth"
  const int64_t pixels = d.sample_numel();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(drawn)));
    d.labels[i] = static_cast<uint8_t>(k);
    DrawKind(k, spec.kinds, spec.channels, spec.side, rng, d.pixels.data() + i * pixels);
  }
  return d;
}

ImageDataset UniformNoiseImages(int64_t count, int64_t channels, int64_t side, uint64_t seed) {
  ImageDataset d = EmptySet(count, channels, side);
  Rng rng(Mix64(seed ^ 0x6e6f697365ull));  // "noise"
  for (float& p : d.pixels) p = static_cast<float>(2 * rng.Uniform() - 1);
  return d;
}

void BlurImages(ImageDataset& images, double sigma) {
  const int64_t radius = static_cast<int64_t>(std::ceil(3 * sigma));
  std::vector<double> kernel(static_cast<size_t>(2 * radius + 1));
  double sum = 0;
  for (int64_t j = -radius; j <= radius; ++j) sum += kernel[j + radius] = std::exp(-0.5 * j * j / (sigma * sigma));
  for (double& w : kernel) w /= sum;
  std::vector<double> scratch;
  const int64_t h = images.height, w = images.width;
  for (int64_t plane = 0; plane < images.count * images.channels; ++plane) {
    float* p = images.pixels.data() + plane * h * w;
    for (int64_t y = 0; y < h; ++y) BlurLine(p + y * w, w, 1, kernel, scratch);
    for (int64_t x = 0; x < w; ++x) BlurLine(p + x, h, w, kernel, scratch);
  }
}

void AddPixelNoise(ImageDataset& images, double stddev, uint64_t seed) {
  Rng rng(Mix64(seed ^ 0x6a6974746572ull));  // "jitter"
  for (float& p : images.pixels) p = Clamped(p + stddev * rng.Normal());
}

void ShiftColours(ImageDataset& images, double amount) {
  const int64_t area = images.height * images.width;
  for (int64_t i = 0; i < images.count; ++i) {
    for (int64_t ch = 0; ch < images.channels; ++ch) {
      const double shift = images.channels == 1 ? amount : (ch == 0 ? amount : ch == 2 ? -amount : 0.0);
      float* p = images.pixels.data() + (i * images.channels + ch) * area;
      for (int64_t j = 0; j < area; ++j) p[j] = Clamped(p[j] + shift);
    }
  }
}

}  // namespace gantry::testing
