#include "worker/infer/tile_blend.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// For each coordinate of an axis, the index of the origin whose tile owns it: the cut
// between neighbours i - 1 and i is the middle of their overlap.
std::vector<int64_t> Owners(const std::vector<int64_t>& origins, int64_t tile, int64_t length) {
  std::vector<int64_t> owner(length, 0);
  size_t i = 0;
  for (int64_t u = 0; u < length; ++u) {
    while (i + 1 < origins.size() && 2 * u >= origins[i] + tile + origins[i + 1]) ++i;
    owner[u] = static_cast<int64_t>(i);
  }
  return owner;
}

std::vector<float> Profile(BlendMode mode, int64_t s) {
  std::vector<float> w(s, 1.0f);
  const double centre = s / 2.0;
  for (int64_t i = 0; i < s; ++i) {
    const double d = i + 0.5 - centre;
    if (mode == BlendMode::kGaussian) {
      const double sigma = 0.125 * s;
      w[i] = static_cast<float>(std::max(1e-3, std::exp(-d * d / (2 * sigma * sigma))));
    } else if (mode == BlendMode::kLinear) {
      w[i] = static_cast<float>((centre - std::abs(d) + 0.5) / (centre + 0.5));
    }
  }
  return w;
}

// Marks [e - band, e + band) of an axis for every interior seam e.
std::vector<uint8_t> AxisBand(const std::vector<int64_t>& origins, int64_t tile, int64_t length, int64_t band) {
  std::vector<uint8_t> in(length, 0);
  auto mark = [&](int64_t e) {
    if (e <= 0 || e >= length) return;  // the field's border is no seam
    for (int64_t u = std::max<int64_t>(0, e - band); u < std::min(length, e + band); ++u) in[u] = 1;
  };
  for (int64_t o : origins) {
    mark(o);
    mark(o + tile);
  }
  return in;
}

}  // namespace

absl::StatusOr<BlendMode> ParseBlendMode(const std::string& name) {
  if (name == "gaussian") return BlendMode::kGaussian;
  if (name == "linear") return BlendMode::kLinear;
  if (name == "none") return BlendMode::kNone;
  return absl::InvalidArgumentError(absl::StrCat("--blend: bad value '", name, "' (one of gaussian, linear, none)"));
}

std::string BlendModeName(BlendMode mode) {
  switch (mode) {
    case BlendMode::kGaussian: return "gaussian";
    case BlendMode::kLinear: return "linear";
    case BlendMode::kNone: return "none";
  }
  return "?";
}

TileBlender::TileBlender(const TilePlan& plan, BlendMode mode) : plan_(plan), mode_(mode) {
  window_ = Profile(mode, plan.tile);
  if (mode == BlendMode::kNone) {
    own_y_ = Owners(plan.ys, plan.tile, plan.height);
    own_x_ = Owners(plan.xs, plan.tile, plan.width);
  }
  coverage_.assign(plan.height * plan.width, 0.0);
  for (int64_t k = 0; k < plan.count(); ++k) {
    const TileOrigin o = plan.tiles[k];
    for (int64_t r = 0; r < plan.tile; ++r) {
      for (int64_t c = 0; c < plan.tile; ++c) coverage_[(o.y + r) * plan.width + o.x + c] += Weight(k, r, c);
    }
  }
}

float TileBlender::Weight(int64_t k, int64_t r, int64_t c) const {
  if (mode_ != BlendMode::kNone) return window_[r] * window_[c];
  const auto cols = static_cast<int64_t>(plan_.xs.size());
  const TileOrigin o = plan_.tiles[k];
  return own_y_[o.y + r] == k / cols && own_x_[o.x + c] == k % cols ? 1.0f : 0.0f;
}

void TileBlender::Blend(const float* tiles, int64_t channels, float* field) const {
  const int64_t s = plan_.tile;
  const int64_t plane = plan_.height * plan_.width;
  std::vector<double> sum(channels * plane, 0.0);
  for (int64_t k = 0; k < plan_.count(); ++k) {
    const TileOrigin o = plan_.tiles[k];
    const float* tile = tiles + k * channels * s * s;
    for (int64_t r = 0; r < s; ++r) {
      for (int64_t c = 0; c < s; ++c) {
        const double w = Weight(k, r, c);
        if (w == 0) continue;
        const int64_t p = (o.y + r) * plan_.width + o.x + c;
        for (int64_t ch = 0; ch < channels; ++ch) sum[ch * plane + p] += w * tile[(ch * s + r) * s + c];
      }
    }
  }
  for (int64_t ch = 0; ch < channels; ++ch) {
    for (int64_t p = 0; p < plane; ++p) field[ch * plane + p] = static_cast<float>(sum[ch * plane + p] / coverage_[p]);
  }
}

std::vector<uint8_t> SeamBandMask(const TilePlan& plan, int64_t band) {
  const std::vector<uint8_t> by = AxisBand(plan.ys, plan.tile, plan.height, band);
  const std::vector<uint8_t> bx = AxisBand(plan.xs, plan.tile, plan.width, band);
  std::vector<uint8_t> mask(plan.height * plan.width, 0);
  for (int64_t y = 0; y < plan.height; ++y) {
    for (int64_t x = 0; x < plan.width; ++x) mask[y * plan.width + x] = by[y] | bx[x];
  }
  return mask;
}

}  // namespace gantry
