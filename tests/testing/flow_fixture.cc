#include "tests/testing/flow_fixture.h"

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "worker/formats/npy.h"

namespace gantry::testing {

float FixtureValue(int64_t t, int c, int64_t y, int64_t x) {
  return 0.1f * static_cast<float>(c + 1) * std::sin(0.37f * x + 0.23f * y - 0.5f * t + c);
}

std::string WriteFixtureCase(const std::string& dir, const FixtureCase& spec) {
  std::filesystem::create_directories(dir);
  std::vector<float> frames(spec.frames * 3 * spec.ny * spec.nx);
  size_t i = 0;
  for (int64_t t = 0; t < spec.frames; ++t)
    for (int c = 0; c < 3; ++c)
      for (int64_t y = 0; y < spec.ny; ++y)
        for (int64_t x = 0; x < spec.nx; ++x) frames[i++] = FixtureValue(t, c, y, x);
  EXPECT_TRUE(WriteNpy(dir + "/frames.npy", frames.data(), {spec.frames, 3, spec.ny, spec.nx}).ok());
  std::vector<float> mask(spec.ny * spec.nx, 0.0f);
  for (int64_t y = 4; y < 7 && y < spec.ny; ++y)
    for (int64_t x = 4; x < 7 && x < spec.nx; ++x) mask[y * spec.nx + x] = 1.0f;
  EXPECT_TRUE(WriteNpy(dir + "/mask.npy", mask.data(), {spec.ny, spec.nx}).ok());
  std::string json = spec.json;
  if (json.empty()) {
    json = absl::StrFormat(
        R"({"nx": %d, "ny": %d, "frames": %d, "re": 100, "u_lattice": 0.05, "diameter": 4, "every": 10,)"
        R"( "strouhal": 0.17, "probe": {"x": 10, "y": 6},)"
        R"( "normalisation": {"ux": {"offset": 0.0, "scale": 0.1}, "uy": {"offset": 0.01, "scale": 0.2},)"
        R"( "vorticity": {"offset": 0.02, "scale": 0.3}}})",
        spec.nx, spec.ny, spec.frames);
  }
  std::ofstream(dir + "/flow.json") << json;
  return json;
}

std::string MakeTempDir(const std::string& prefix) {
  std::string templ = ::testing::TempDir() + "/" + prefix + "_XXXXXX";
  EXPECT_NE(mkdtemp(templ.data()), nullptr);
  return templ;
}

}  // namespace gantry::testing
