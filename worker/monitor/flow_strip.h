// Pictures of flow fields: vorticity in a diverging colour map (blue negative, white
// zero, red positive), laid out as a strip of frames for a rollout.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gantry {

// The colour of v / limit in [-1, 1] (clamped): blue (-1) through white (0) to red (+1),
// linear in each half. NaN is black.
std::array<uint8_t, 3> DivergingColour(float v, float limit);

// A strip of `rows` x `columns` fields (each height x width floats, in `fields` row by
// row, columns per row), 2-pixel grey gaps, coloured with DivergingColour at `limit`
// (the same for every field, so the panels compare). Written atomically as a PNG.
absl::Status WriteFieldStrip(const std::string& path, const std::vector<const float*>& fields, int64_t rows,
                             int64_t columns, int64_t height, int64_t width, float limit);

}  // namespace gantry
