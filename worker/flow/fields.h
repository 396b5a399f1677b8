// The fields a frame holds (ux, uy, vorticity) and their normalisation constants.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry::flow {

inline constexpr int kChannels = 3;
inline constexpr const char* kChannelNames[kChannels] = {"ux", "uy", "vorticity"};

// Vorticity w = d(uy)/dx - d(ux)/dy (counter-clockwise positive) by central
// differences; one-sided at the x edges, and at the y edges unless `periodic_y`. Solid
// cells (mask non-zero, may be empty) hold velocity 0 (the no-slip wall) and get w = 0.
std::vector<float> Vorticity(const std::vector<float>& ux, const std::vector<float>& uy, int nx, int ny,
                             bool periodic_y, const std::vector<uint8_t>& solid);

// normalised = (value - offset) / scale.
struct ChannelScale {
  double offset = 0;
  double scale = 1;
};

// For each channel of `frames` ([T, 3, ny, nx]): the mid-range and half-range over all
// frames, so the normalised values span exactly [-1, 1] (tanh's range). A constant
// channel gets scale 1.
std::vector<ChannelScale> NormalisationOf(const std::vector<float>& frames, int64_t t, int64_t plane);

}  // namespace gantry::flow
