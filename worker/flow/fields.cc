#include "worker/flow/fields.h"

#include <algorithm>
#include <limits>

namespace gantry::flow {

std::vector<float> Vorticity(const std::vector<float>& ux, const std::vector<float>& uy, int nx, int ny,
                             bool periodic_y, const std::vector<uint8_t>& solid) {
  std::vector<float> w(static_cast<size_t>(nx) * ny, 0.f);
  auto at = [nx](const std::vector<float>& v, int x, int y) { return v[static_cast<size_t>(y) * nx + x]; };
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      const size_t c = static_cast<size_t>(y) * nx + x;
      if (!solid.empty() && solid[c]) continue;
      const int xl = std::max(x - 1, 0), xr = std::min(x + 1, nx - 1);
      int yd = y - 1, yu = y + 1;
      if (periodic_y) {
        yd = (yd + ny) % ny;
        yu = yu % ny;
      } else {
        yd = std::max(yd, 0);
        yu = std::min(yu, ny - 1);
      }
      const float dvdx = (at(uy, xr, y) - at(uy, xl, y)) / static_cast<float>(xr - xl);
      const float dydist = periodic_y ? 2.f : static_cast<float>(yu - yd);
      const float dudy = (at(ux, x, yu) - at(ux, x, yd)) / dydist;
      w[c] = dvdx - dudy;
    }
  }
  return w;
}

std::vector<ChannelScale> NormalisationOf(const std::vector<float>& frames, int64_t t, int64_t plane) {
  std::vector<ChannelScale> out(kChannels);
  for (int ch = 0; ch < kChannels; ++ch) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t k = 0; k < t; ++k) {
      const float* p = frames.data() + (k * kChannels + ch) * plane;
      const auto [mn, mx] = std::minmax_element(p, p + plane);
      lo = std::min(lo, *mn);
      hi = std::max(hi, *mx);
    }
    if (t == 0 || !(hi > lo)) continue;  // offset 0, scale 1
    out[ch].offset = 0.5 * (static_cast<double>(hi) + lo);
    out[ch].scale = 0.5 * (static_cast<double>(hi) - lo);
  }
  return out;
}

}  // namespace gantry::flow
