#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/flow_fixture.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_dataset.h"
#include "worker/data/flow_pairs.h"
#include "worker/data/flow_split.h"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::FixtureCase;
using testing::FixtureValue;
using testing::MakeTempDir;
using testing::WriteFixtureCase;

class FlowDataTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = MakeTempDir("gantry_flow"); }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string Case(const std::string& name, const FixtureCase& spec = {}) {
    const std::string dir = root_ + "/" + name;
    WriteFixtureCase(dir, spec);
    return dir;
  }
  std::string Error(const std::string& dir) {
    absl::StatusOr<FlowCase> c = LoadFlowCase(dir);
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
    return std::string(c.status().message());
  }
  std::string root_;
};

TEST_F(FlowDataTest, LoadsACaseAndItsConstants) {
  const std::string dir = Case("a");
  absl::StatusOr<FlowCase> c = LoadFlowCase(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->frames, 6);
  EXPECT_EQ(c->ny, 12);
  EXPECT_EQ(c->nx, 20);
  EXPECT_FLOAT_EQ(c->frame(2)[(1 * 12 + 3) * 20 + 5], FixtureValue(2, 1, 3, 5));
  EXPECT_FLOAT_EQ(c->norm.scale[2], 0.3f);
  EXPECT_FLOAT_EQ(c->norm.offset[1], 0.01f);
  EXPECT_EQ(c->mask[4 * 20 + 4], 1.0f);
  EXPECT_EQ(c->mask[0], 0.0f);
  ASSERT_TRUE(c->info.diameter.has_value());
  EXPECT_EQ(*c->info.diameter, 4);
  EXPECT_EQ(*c->info.probe_x, 10);
  std::vector<float> n(c->frame_numel());
  NormaliseFrame(*c, 3, n.data());
  EXPECT_FLOAT_EQ(n[(2 * 12 + 1) * 20 + 7], (FixtureValue(3, 2, 1, 7) - 0.02f) / 0.3f);
  DenormaliseFrame(c->norm, c->plane(), n.data());
  EXPECT_NEAR(n[(2 * 12 + 1) * 20 + 7], FixtureValue(3, 2, 1, 7), 1e-6);
}

TEST_F(FlowDataTest, FramesOfTheWrongRankOrChannelsAreRefusedNamingTheFileAndTheFix) {
  const std::string dir = Case("a");
  std::vector<float> three(3 * 12 * 20);
  ASSERT_TRUE(WriteNpy(dir + "/frames.npy", three.data(), {3, 12, 20}).ok());
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("frames.npy"), HasSubstr("[3, 12, 20]"), HasSubstr("[T, 3, NY, NX]"),
                                HasSubstr("np.float32")));
  std::vector<float> two_channels(2 * 2 * 12 * 20);
  ASSERT_TRUE(WriteNpy(dir + "/frames.npy", two_channels.data(), {2, 2, 12, 20}).ok());
  EXPECT_THAT(Error(dir), HasSubstr("[2, 2, 12, 20]"));
}

TEST_F(FlowDataTest, FramesOfTheWrongDtypeAreRefusedNamingTheFile) {
  const std::string dir = Case("a");
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3, 1, 1), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(dict.size() & 0xff));
  bytes.push_back(static_cast<char>(dict.size() >> 8));
  bytes += dict + std::string(12, '\0');
  std::ofstream(dir + "/frames.npy", std::ios::binary) << bytes;
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("frames.npy"), HasSubstr("<i4")));
}

TEST_F(FlowDataTest, AMaskOfTheWrongSizeIsRefused) {
  const std::string dir = Case("a");
  std::vector<float> mask(12 * 19);
  ASSERT_TRUE(WriteNpy(dir + "/mask.npy", mask.data(), {12, 19}).ok());
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("mask.npy"), HasSubstr("[12, 19]"), HasSubstr("expected [12, 20]")));
}

TEST_F(FlowDataTest, MissingOrMalformedFlowJsonIsRefused) {
  const std::string dir = Case("a");
  std::filesystem::remove(dir + "/flow.json");
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("flow.json"), HasSubstr("missing"), HasSubstr("make-flow")));
  std::ofstream(dir + "/flow.json") << "{\"nx\": 20,";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("flow.json"), HasSubstr("not a JSON object")));
  std::ofstream(dir + "/flow.json") << R"({"nx": 20})";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("flow.json"), HasSubstr("normalisation")));
  std::ofstream(dir + "/flow.json")
      << R"({"normalisation": {"ux": {"offset": 0, "scale": 1}, "uy": {"offset": 0, "scale": 0},)"
         R"( "vorticity": {"offset": 0, "scale": 1}}})";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("normalisation.uy"), HasSubstr("positive")));
  std::ofstream(dir + "/flow.json")
      << R"({"nx": 21, "normalisation": {"ux": {"offset": 0, "scale": 1}, "uy": {"offset": 0, "scale": 1},)"
         R"( "vorticity": {"offset": 0, "scale": 1}}})";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("nx = 21"), HasSubstr("frames.npy has 20")));
}

// What is wrong with flow.json is said: NaN, 1e400 and bad UTF-8 are not valid JSON, each
// with the parser's reason; a FIFO is refused at once as not a regular file (not
// "missing", and without waiting for a writer).
TEST_F(FlowDataTest, FlowJsonFaultsAreNamedForWhatTheyAre) {
  const std::string dir = Case("a");
  const std::string good_norm = R"("normalisation": {"ux": {"offset": 0, "scale": 1}, "uy": {"offset": 0, "scale": 1},)"
                                R"( "vorticity": {"offset": 0, "scale": 1}})";
  const struct {
    std::string text;
    const char* says;
  } cases[] = {
      {"{\"re\": NaN, " + good_norm + "}", "invalid literal"},
      {"{\"re\": 1e400, " + good_norm + "}", "number overflow"},
      {"{\"re\": \"\xff\xfe\", " + good_norm + "}", "ill-formed UTF-8"},
      {"[1, 2]", "not a JSON object (it is a JSON array)"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/flow.json", std::ios::trunc) << c.text;
    const std::string e = Error(dir);
    EXPECT_THAT(e, AllOf(HasSubstr("flow.json"), HasSubstr(c.says))) << c.text;
    EXPECT_EQ(e.find('\xff'), std::string::npos) << "the raw byte is quoted escaped";
  }
  std::filesystem::remove(dir + "/flow.json");
  ASSERT_EQ(::mkfifo((dir + "/flow.json").c_str(), 0600), 0);
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("flow.json"), HasSubstr("not a regular file")));
  std::filesystem::remove(dir + "/flow.json");
  std::filesystem::create_directory(dir + "/flow.json");
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("flow.json"), HasSubstr("is a directory")));
  std::filesystem::remove(dir + "/frames.npy");
  std::filesystem::create_directory(dir + "/frames.npy");
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("frames.npy"), HasSubstr("is a directory")));
}

// Numbers of the wrong kind are taken as absent or refused, never converted out of range
// (undefined behaviour): a float where a whole number belongs, a huge one, a huge scale.
TEST_F(FlowDataTest, NumbersOutOfTheirTypesRangeAreNotConverted) {
  const std::string dir = Case("a");
  const std::string norm = R"("normalisation": {"ux": {"offset": 0, "scale": 1}, "uy": {"offset": 0, "scale": 1},)"
                           R"( "vorticity": {"offset": 0, "scale": 1}})";
  std::ofstream(dir + "/flow.json", std::ios::trunc)
      << R"({"every": 1e300, "probe": {"x": 1.5, "y": -1e300}, "diameter": 1e308, "nx": 20.0, )" << norm << "}";
  absl::StatusOr<FlowCase> c = LoadFlowCase(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->info.every.has_value());
  EXPECT_FALSE(c->info.probe_x.has_value());
  EXPECT_FALSE(c->info.probe_y.has_value());
  EXPECT_EQ(c->info.diameter, 1e308);
  std::ofstream(dir + "/flow.json", std::ios::trunc)
      << R"({"nx": 18446744073709551615, )" << norm << "}";
  EXPECT_TRUE(LoadFlowCase(dir).ok());  // an nx too large to be a whole number here is not one: absent
  std::ofstream(dir + "/flow.json", std::ios::trunc)
      << R"({"normalisation": {"ux": {"offset": 1e300, "scale": 1}, "uy": {"offset": 0, "scale": 1e-300},)"
         R"( "vorticity": {"offset": 0, "scale": 1}}})";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("normalisation.ux"), HasSubstr("finite floats")));
  std::ofstream(dir + "/flow.json", std::ios::trunc)
      << R"({"normalisation": {"ux": {"offset": 0, "scale": 1}, "uy": {"offset": 0, "scale": 1e-300},)"
         R"( "vorticity": {"offset": 0, "scale": 1}}})";
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("normalisation.uy"), HasSubstr("0 as a float")));
}

TEST_F(FlowDataTest, NonFiniteValuesAreRefusedWithTheirIndex) {
  const std::string dir = Case("a");
  std::vector<float> frames(2 * 3 * 12 * 20, 0.0f);
  frames[17] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(WriteNpy(dir + "/frames.npy", frames.data(), {2, 3, 12, 20}).ok());
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("frames.npy"), HasSubstr("nan"), HasSubstr("index 17")));
  WriteFixtureCase(dir);
  std::vector<float> mask(12 * 20, 0.0f);
  mask[3] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(WriteNpy(dir + "/mask.npy", mask.data(), {12, 20}).ok());
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("mask.npy"), HasSubstr("inf")));
}

TEST_F(FlowDataTest, AMissingFileOrFolderIsNamed) {
  EXPECT_THAT(Error(root_ + "/nope"), HasSubstr("not a folder"));
  const std::string dir = Case("a");
  std::filesystem::remove(dir + "/mask.npy");
  EXPECT_THAT(Error(dir), AllOf(HasSubstr("mask.npy"), HasSubstr("missing")));
}

TEST_F(FlowDataTest, FindsTheRootItselfOrItsCaseSubfoldersSorted) {
  const std::string single = Case("single");
  absl::StatusOr<std::vector<std::string>> one = FindFlowCases(single);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<std::string>{single});
  const std::string many = root_ + "/many";
  WriteFixtureCase(many + "/b");
  WriteFixtureCase(many + "/a");
  std::filesystem::create_directories(many + "/not_a_case");
  absl::StatusOr<std::vector<std::string>> two = FindFlowCases(many);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, (std::vector<std::string>{many + "/a", many + "/b"}));
  absl::StatusOr<std::vector<std::string>> none = FindFlowCases(many + "/not_a_case");
  EXPECT_TRUE(absl::IsInvalidArgument(none.status()));
  EXPECT_THAT(none.status().message(), AllOf(HasSubstr("holds no flow case"), HasSubstr("make-flow")));
}

TEST_F(FlowDataTest, SeveralCasesHoldOutTheLastOneSingleCaseHoldsOutTheLastFifth) {
  std::vector<FlowCase> cases;
  for (const char* name : {"a", "b", "c"}) cases.push_back(*LoadFlowCase(Case(name, {.frames = 6})));
  absl::StatusOr<FlowSplit> split = SplitFlowPairs(cases, 2);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train, (std::vector<FlowPairRange>{{0, 0, 4}, {1, 0, 4}}));
  EXPECT_EQ(split->validation, (std::vector<FlowPairRange>{{2, 0, 4}}));

  std::vector<FlowCase> single = {*LoadFlowCase(Case("long", {.frames = 21}))};
  split = SplitFlowPairs(single, 1);  // 20 pairs: inputs 16..19 validate, targets of training < 16
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->validation, (std::vector<FlowPairRange>{{0, 16, 20}}));
  EXPECT_EQ(split->train, (std::vector<FlowPairRange>{{0, 0, 15}}));

  std::vector<FlowCase> short_case = {*LoadFlowCase(Case("short", {.frames = 3}))};
  EXPECT_THAT(SplitFlowPairs(short_case, 1).status().message(), HasSubstr("too few"));
  EXPECT_THAT(SplitFlowPairs(short_case, 3).status().message(), HasSubstr("lower --horizon"));
}

TEST_F(FlowDataTest, PairRowsAreNormalisedCropsOfFrameMaskAndTarget) {
  std::vector<FlowCase> cases = {*LoadFlowCase(Case("a"))};
  FlowPairOptions options{.image_size = 8, .horizon = 2, .seed = 5, .crops_per_pair = 3};
  absl::StatusOr<ImageDataset> rows = MakeFlowPairs(cases, {{0, 0, 4}}, options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->count, 12);
  EXPECT_EQ(rows->channels, 7);
  EXPECT_EQ(rows->height, 8);
  EXPECT_EQ(rows->labels.size(), 12u);
  const FlowCase& c = cases[0];
  // Each row must be some crop (t, y, x): find it from channel 0's corner and check all.
  for (int64_t i = 0; i < rows->count; ++i) {
    const float* row = rows->pixels.data() + i * rows->sample_numel();
    bool found = false;
    for (int64_t t = 0; t < 4 && !found; ++t) {
      for (int64_t y = 0; y + 8 <= c.ny && !found; ++y) {
        for (int64_t x = 0; x + 8 <= c.nx && !found; ++x) {
          bool all = true;
          for (int64_t r = 0; r < 8 && all; ++r) {
            for (int64_t k = 0; k < 8 && all; ++k) {
              for (int ch = 0; ch < 3 && all; ++ch) {
                const float in = (FixtureValue(t, ch, y + r, x + k) - c.norm.offset[ch]) / c.norm.scale[ch];
                const float out = (FixtureValue(t + 2, ch, y + r, x + k) - c.norm.offset[ch]) / c.norm.scale[ch];
                all = std::abs(row[(ch * 8 + r) * 8 + k] - in) < 1e-5f &&
                      std::abs(row[((4 + ch) * 8 + r) * 8 + k] - out) < 1e-5f;
              }
              all = all && row[(3 * 8 + r) * 8 + k] == c.mask[(y + r) * c.nx + x + k];
            }
          }
          found = all;
        }
      }
    }
    EXPECT_TRUE(found) << "row " << i << " is no crop of a pair";
  }
  // Seeded: the same seed gives the same rows, another seed other crops.
  EXPECT_EQ(MakeFlowPairs(cases, {{0, 0, 4}}, options)->pixels, rows->pixels);
  options.seed = 6;
  EXPECT_NE(MakeFlowPairs(cases, {{0, 0, 4}}, options)->pixels, rows->pixels);
  options.max_rows = 5;
  EXPECT_EQ(MakeFlowPairs(cases, {{0, 0, 4}}, options)->count, 5);
}

// --input-noise: the same crops, the condition's frame channels off by noise of about
// the asked standard deviation, the mask and the target untouched; held-out rows clean.
TEST_F(FlowDataTest, InputNoiseTouchesOnlyTheTrainingConditionsFrame) {
  std::vector<FlowCase> cases = {*LoadFlowCase(Case("a"))};
  FlowPairOptions options{.image_size = 8, .horizon = 1, .seed = 5, .crops_per_pair = 4};
  const absl::StatusOr<ImageDataset> clean = MakeFlowPairs(cases, {{0, 0, 4}}, options);
  options.input_noise = 0.05f;
  const absl::StatusOr<ImageDataset> noisy = MakeFlowPairs(cases, {{0, 0, 4}}, options);
  ASSERT_TRUE(clean.ok() && noisy.ok());
  ASSERT_EQ(clean->count, noisy->count);
  const int64_t plane = 64;
  double sum_sq = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < clean->count; ++i) {
    const float* a = clean->pixels.data() + i * clean->sample_numel();
    const float* b = noisy->pixels.data() + i * noisy->sample_numel();
    for (int64_t k = 0; k < 3 * plane; ++k, ++n) sum_sq += (b[k] - a[k]) * static_cast<double>(b[k] - a[k]);
    for (int64_t k = 3 * plane; k < 7 * plane; ++k) ASSERT_EQ(a[k], b[k]) << "row " << i << " value " << k;
  }
  EXPECT_NEAR(std::sqrt(sum_sq / static_cast<double>(n)), 0.05, 0.005);  // 3072 draws
  options.input_noise = -0.1f;
  EXPECT_THAT(MakeFlowPairs(cases, {{0, 0, 4}}, options).status().message(), HasSubstr("--input-noise"));

  WriteFixtureCase(root_ + "/noisy/a");
  WriteFixtureCase(root_ + "/noisy/b");
  const absl::StatusOr<FlowDataset> with = LoadFlowDataset(root_ + "/noisy", {.image_size = 8, .input_noise = 0.05f});
  const absl::StatusOr<FlowDataset> without = LoadFlowDataset(root_ + "/noisy", {.image_size = 8});
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with->validation.pixels, without->validation.pixels);
  EXPECT_NE(with->train.pixels, without->train.pixels);
}

TEST_F(FlowDataTest, DefaultCropsCoverEachFrameOnceOnAverage) {
  std::vector<FlowCase> cases = {*LoadFlowCase(Case("a"))};  // 12 x 20 = 240 cells
  absl::StatusOr<ImageDataset> rows = MakeFlowPairs(cases, {{0, 0, 2}}, {.image_size = 8});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->count, 2 * 4);  // ceil(240 / 64) = 4 per pair
}

TEST_F(FlowDataTest, AnImageSizeLargerThanTheFieldIsRefusedWithTheFix) {
  std::vector<FlowCase> cases = {*LoadFlowCase(Case("a"))};
  absl::StatusOr<ImageDataset> rows = MakeFlowPairs(cases, {{0, 0, 2}}, {.image_size = 16});
  EXPECT_TRUE(absl::IsInvalidArgument(rows.status()));
  EXPECT_THAT(rows.status().message(),
              AllOf(HasSubstr("--image-size 16"), HasSubstr("12x20"), HasSubstr("<= 12"), HasSubstr("--nx/--ny")));
}

TEST_F(FlowDataTest, ADataRootGivesTrainingAndHeldOutRows) {
  WriteFixtureCase(root_ + "/set/a");
  WriteFixtureCase(root_ + "/set/b");
  absl::StatusOr<FlowDataset> data = LoadFlowDataset(root_ + "/set", {.image_size = 8, .seed = 3, .max_rows = 7});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->cases.size(), 2u);
  EXPECT_EQ(data->train.count, 7);
  EXPECT_EQ(data->validation.count, 5 * 4);  // case b's 5 pairs, 4 crops each
  EXPECT_THAT(data->split.rule, HasSubstr("/set/b"));
}

// --unroll M: each row is a window, the condition then the frames t + h, ..., t + M h at
// the same crop. The crops do not depend on M, so the window's k-th target is the target
// of the pair rows at horizon k h from the same seed.
TEST_F(FlowDataTest, WindowRowsHoldTheNextMFramesAtTheSameCrop) {
  std::vector<FlowCase> cases = {*LoadFlowCase(Case("a"))};  // 6 frames
  FlowPairOptions options{.image_size = 8, .horizon = 1, .unroll = 3, .seed = 5, .crops_per_pair = 2};
  const absl::StatusOr<ImageDataset> windows = MakeFlowPairs(cases, {{0, 0, 3}}, options);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(windows->channels, 13);
  EXPECT_EQ(windows->count, 6);
  const int64_t plane = 64;
  for (int64_t k = 1; k <= 3; ++k) {
    const absl::StatusOr<ImageDataset> pairs =
        MakeFlowPairs(cases, {{0, 0, 3}}, {.image_size = 8, .horizon = k, .seed = 5, .crops_per_pair = 2});
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    for (int64_t i = 0; i < pairs->count; ++i) {
      const float* w = windows->pixels.data() + i * windows->sample_numel();
      const float* p = pairs->pixels.data() + i * pairs->sample_numel();
      for (int64_t v = 0; v < 4 * plane; ++v) ASSERT_EQ(w[v], p[v]) << "condition, row " << i;
      for (int64_t v = 0; v < 3 * plane; ++v) ASSERT_EQ(w[(1 + 3 * k) * plane + v], p[4 * plane + v]) << "target " << k;
    }
  }
  options.unroll = 0;
  EXPECT_THAT(MakeFlowPairs(cases, {{0, 0, 3}}, options).status().message(), HasSubstr("--unroll 0"));
  EXPECT_TRUE(IsFlowRowShape(13, 8, 8));
  EXPECT_TRUE(IsFlowRowShape(7, 8, 8));
  EXPECT_FALSE(IsFlowRowShape(8, 8, 8));
  EXPECT_FALSE(IsFlowRowShape(4, 8, 8));
  EXPECT_FALSE(IsFlowRowShape(13, 8, 16));
}

// Training windows end where the training pairs' frames end: no window reaches a held-out
// frame; a case too short for one window is refused naming it and the fix.
TEST_F(FlowDataTest, UnrolledWindowsStayInTheTrainingFramesOrAreRefusedByName) {
  std::vector<FlowCase> cases;
  for (const char* name : {"a", "b", "c"}) cases.push_back(*LoadFlowCase(Case(name, {.frames = 6})));
  const FlowSplit split = *SplitFlowPairs(cases, 1);
  absl::StatusOr<std::vector<FlowPairRange>> windows = UnrolledWindows(cases, split.train, 3, 1);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(*windows, (std::vector<FlowPairRange>{{0, 0, 3}, {1, 0, 3}}));  // t + 3 <= 5, the last frame
  EXPECT_EQ(*UnrolledWindows(cases, split.train, 1, 1), split.train);

  std::vector<FlowCase> single = {*LoadFlowCase(Case("long", {.frames = 21}))};
  const FlowSplit one = *SplitFlowPairs(single, 1);  // validation inputs from frame 16
  windows = UnrolledWindows(single, one.train, 4, 1);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(*windows, (std::vector<FlowPairRange>{{0, 0, 12}}));  // the last window, t = 11, ends at frame 15

  const absl::StatusOr<std::vector<FlowPairRange>> too_long = UnrolledWindows(cases, split.train, 6, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(too_long.status()));
  EXPECT_THAT(too_long.status().message(), AllOf(HasSubstr("/a/frames.npy"), HasSubstr("--unroll 6"),
                                                 HasSubstr("windows of 7 frames"), HasSubstr("6 frames"),
                                                 HasSubstr("lower --unroll"), HasSubstr("make-flow --frames")));
  EXPECT_THAT(UnrolledWindows(cases, split.train, 3, 3).status().message(), HasSubstr("--horizon 3"));
}

// A data root with --unroll: training windows, held-out rows the one-step pairs of before.
TEST_F(FlowDataTest, UnrolledDataRootKeepsTheOneStepHeldOutRows) {
  WriteFixtureCase(root_ + "/set/a");
  WriteFixtureCase(root_ + "/set/b");
  const absl::StatusOr<FlowDataset> unrolled = LoadFlowDataset(root_ + "/set", {.image_size = 8, .unroll = 2});
  const absl::StatusOr<FlowDataset> pairs = LoadFlowDataset(root_ + "/set", {.image_size = 8});
  ASSERT_TRUE(unrolled.ok() && pairs.ok()) << unrolled.status();
  EXPECT_EQ(unrolled->train.channels, 10);
  EXPECT_EQ(unrolled->train.count, 4 * 4);  // case a's inputs 0-3 (frames 0-5), 4 crops each
  EXPECT_EQ(unrolled->validation.channels, 7);
  EXPECT_EQ(unrolled->validation.pixels, pairs->validation.pixels);
  EXPECT_THAT(LoadFlowDataset(root_ + "/set", {.image_size = 8, .unroll = 6}).status().message(),
              HasSubstr("--unroll 6"));
}

}  // namespace
}  // namespace gantry
