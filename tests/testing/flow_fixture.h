// Synthetic flow cases on disk in the layout of the flow contract, for tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry::testing {

// The physical value the fixture stores at frame t, channel c, cell (y, x): a travelling
// wave per channel, so every frame, channel and cell differs.
float FixtureValue(int64_t t, int c, int64_t y, int64_t x);

struct FixtureCase {
  int64_t frames = 6;
  int64_t ny = 12;
  int64_t nx = 20;
  // Written verbatim as flow.json when not empty; otherwise a valid one with offset 0.01 c
  // and scale 0.1 (c + 1) for channel c, nx, ny, frames and the probe/geometry keys.
  std::string json;
};

// Writes frames.npy, mask.npy (a 3x3 block at (4, 4)) and flow.json into `dir`
// (created). Returns the flow.json text written.
std::string WriteFixtureCase(const std::string& dir, const FixtureCase& spec = {});

// A fresh temporary folder under the test's TempDir.
std::string MakeTempDir(const std::string& prefix);

}  // namespace gantry::testing
