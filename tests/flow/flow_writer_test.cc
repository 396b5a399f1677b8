// A case folder as the flow contract defines it, read back the way training reads it.
#include "worker/flow/flow_writer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "worker/formats/npy.h"

namespace gantry::flow {
namespace {

TEST(FlowWriter, WritesTheContractsFilesAndTheyReadBack) {
  FlowRequest r;
  r.nx = 128;
  r.ny = 32;
  r.frames = 12;
  r.warmup_periods = 1;
  absl::StatusOr<FlowSetup> setup = ResolveFlow(r);
  ASSERT_TRUE(setup.ok()) << setup.status();
  absl::StatusOr<FlowResult> result = SimulateFlow(*setup, Clock::Real(), nullptr, 1e9);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "/flow_writer_case";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WriteFlowCase(dir, *setup, *result).ok());

  absl::StatusOr<NpyArray> frames = ReadNpy(dir + "/frames.npy");
  ASSERT_TRUE(frames.ok()) << frames.status();
  EXPECT_EQ(frames->shape, (std::vector<int64_t>{12, 3, 32, 128}));
  absl::StatusOr<NpyArray> mask = ReadNpy(dir + "/mask.npy");
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(mask->shape, (std::vector<int64_t>{32, 128}));
  const int64_t plane = 32 * 128;
  const size_t centre = static_cast<size_t>(setup->obstacle.cy) * 128 + static_cast<size_t>(setup->obstacle.cx);
  EXPECT_EQ(mask->data[centre], 1.f);
  EXPECT_EQ(mask->data[0], 0.f);
  // Inside the obstacle the velocity is zero; upstream of it the stream runs at about U.
  EXPECT_EQ(frames->data[centre], 0.f);
  EXPECT_NEAR(frames->data[16 * 128 + 5], r.u_lattice, 0.02);

  std::ifstream in(dir + "/flow.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  for (const char* key : {"nx", "ny", "re", "u_lattice", "nu", "tau", "diameter", "obstacle", "every", "frames",
                          "warmup_steps", "seed", "strouhal", "probe", "normalisation"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["obstacle"]["kind"], "cylinder");
  EXPECT_EQ(j["every"], setup->every);
  // The normalisation maps every channel onto [-1, 1], reaching both ends.
  const char* names[3] = {"ux", "uy", "vorticity"};
  for (int c = 0; c < 3; ++c) {
    const double offset = j["normalisation"][names[c]]["offset"], scale = j["normalisation"][names[c]]["scale"];
    double lo = 1e9, hi = -1e9;
    for (int64_t t = 0; t < 12; ++t) {
      for (int64_t k = 0; k < plane; ++k) {
        const double v = (frames->data[(t * 3 + c) * plane + k] - offset) / scale;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
    EXPECT_NEAR(lo, -1, 1e-5) << names[c];
    EXPECT_NEAR(hi, 1, 1e-5) << names[c];
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gantry::flow
