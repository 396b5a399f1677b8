// Fitting decoded images into N x N (worker/formats/image_fit.h): the geometry of crop
// (torchvision's Resize + CenterCrop), pad and stretch; exact pass-through where no
// resampling is needed; the Catmull-Rom filter's weights; channels and alpha.
#include "worker/formats/image_fit.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/formats/image_resample.h"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

// A decoded image of width x height with `channels` bytes a pixel from `value(x, y, c)`.
template <typename F>
DecodedImage MakeImage(int64_t width, int64_t height, int channels, F value) {
  DecodedImage image;
  image.format = ImageFormat::kPng;
  image.file = {width, height};
  image.width = width;
  image.height = height;
  image.channels = channels;
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) image.pixels.push_back(static_cast<uint8_t>(value(x, y, c)));
    }
  }
  return image;
}

int Noise(int64_t x, int64_t y, int c) { return static_cast<int>((x * 37 + y * 101 + c * 59 + x * y * 13) % 256); }

std::vector<uint8_t> Fit(const DecodedImage& image, ImageFitSettings settings) {
  std::vector<uint8_t> out(static_cast<size_t>(StoredChannels(settings) * settings.size * settings.size), 7);
  FitImage(image, settings, out);
  return out;
}

// Stored value of channel c, row y, column x of a CHW record of size n.
uint8_t At(const std::vector<uint8_t>& record, int64_t n, int c, int64_t y, int64_t x) {
  return record[static_cast<size_t>((c * n + y) * n + x)];
}

TEST(CatmullRom, IsInterpolatingWithTheKnownShape) {
  EXPECT_EQ(CatmullRom(0), 1.0);
  EXPECT_EQ(CatmullRom(1), 0.0);
  EXPECT_EQ(CatmullRom(-1), 0.0);
  EXPECT_EQ(CatmullRom(2), 0.0);
  EXPECT_DOUBLE_EQ(CatmullRom(0.5), 0.5625);
  EXPECT_DOUBLE_EQ(CatmullRom(1.5), -0.0625);
}

TEST(ResampleTaps, WeightsOfEverySampleSumToOne) {
  for (auto [in, out] : std::vector<std::pair<int64_t, int64_t>>{{100, 7}, {7, 100}, {64, 63}, {3, 9}, {1000, 1}}) {
    const ResampleTaps taps = ComputeResampleTaps(in, out, 0, out);
    for (int64_t j = 0; j < out; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < taps.count[static_cast<size_t>(j)]; ++k) {
        sum += taps.weights[static_cast<size_t>(j * taps.stride + k)];
        EXPECT_GE(taps.first[static_cast<size_t>(j)] + k, 0);
        EXPECT_LT(taps.first[static_cast<size_t>(j)] + k, in);
      }
      EXPECT_NEAR(sum, 1.0, 1e-5) << in << " -> " << out << ", sample " << j;
    }
  }
}

TEST(PlanFit, CropIsTorchvisionResizeThenCenterCrop) {
  ImageFitSettings s;
  s.size = 64;
  // 300x200: the short side to 64, the long to int(64 * 300 / 200) = 96; left offset 16.
  FitGeometry g = PlanFit({300, 200}, s);
  EXPECT_EQ(g.resized.width, 96);
  EXPECT_EQ(g.resized.height, 64);
  EXPECT_EQ(g.offset_x, 16);
  EXPECT_EQ(g.offset_y, 0);
  // 64 * 333 / 200 = 106.56 -> 106; (106 - 64) / 2 = 21.
  g = PlanFit({200, 333}, s);
  EXPECT_EQ(g.resized.height, 106);
  EXPECT_EQ(g.offset_y, 21);
  // Python's round() ties to even: (97 - 64) / 2 = 16.5 -> 16, (99 - 64) / 2 = 17.5 -> 18.
  s.size = 64;
  EXPECT_EQ(PlanFit({97, 64}, s).offset_x, 16);
  EXPECT_EQ(PlanFit({99, 64}, s).offset_x, 18);
}

TEST(PlanFit, PadCentresTheLongSideFit) {
  ImageFitSettings s;
  s.size = 32;
  s.fit = ImageFit::kPad;
  FitGeometry g = PlanFit({100, 50}, s);
  EXPECT_EQ(g.resized.width, 32);
  EXPECT_EQ(g.resized.height, 16);
  EXPECT_EQ(g.offset_x, 0);
  EXPECT_EQ(g.offset_y, -8);
  g = PlanFit({30, 100}, s);  // 32 * 30 / 100 = 9.6 -> 10, offset (32 - 10) / 2 = 11
  EXPECT_EQ(g.resized.width, 10);
  EXPECT_EQ(g.offset_x, -11);
  EXPECT_EQ(PlanFit({1000, 1}, s).resized.height, 1);  // never 0
}

TEST(FitImage, AnImageAlreadyNxNComesThroughExactly) {
  const DecodedImage image = MakeImage(16, 16, 3, Noise);
  for (ImageFit fit : {ImageFit::kStretch, ImageFit::kCrop, ImageFit::kPad}) {
    ImageFitSettings s;
    s.size = 16;
    s.fit = fit;
    const std::vector<uint8_t> out = Fit(image, s);
    for (int c = 0; c < 3; ++c) {
      for (int64_t y = 0; y < 16; ++y) {
        for (int64_t x = 0; x < 16; ++x) ASSERT_EQ(At(out, 16, c, y, x), Noise(x, y, c)) << ImageFitName(fit);
      }
    }
  }
}

TEST(FitImage, CropOfATallImageKeepsItsCentreRows) {
  // 16x24 at N 16: no scaling, rows 4..19 kept ((24 - 16) / 2 = 4).
  const DecodedImage image = MakeImage(16, 24, 3, Noise);
  ImageFitSettings s;
  s.size = 16;
  const std::vector<uint8_t> out = Fit(image, s);
  for (int c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < 16; ++y) {
      for (int64_t x = 0; x < 16; ++x) ASSERT_EQ(At(out, 16, c, y, x), Noise(x, y + 4, c));
    }
  }
}

TEST(FitImage, PadCentresOnTheBackground) {
  // 16x8 at N 16: no scaling, rows 4..11 hold the image, the rest the background.
  const DecodedImage image = MakeImage(16, 8, 3, Noise);
  for (AlphaHandling alpha : {AlphaHandling::kWhite, AlphaHandling::kBlack}) {
    ImageFitSettings s;
    s.size = 16;
    s.fit = ImageFit::kPad;
    s.alpha = alpha;
    const std::vector<uint8_t> out = Fit(image, s);
    const int background = alpha == AlphaHandling::kWhite ? 255 : 0;
    for (int c = 0; c < 3; ++c) {
      for (int64_t y = 0; y < 16; ++y) {
        for (int64_t x = 0; x < 16; ++x) {
          ASSERT_EQ(At(out, 16, c, y, x), y >= 4 && y < 12 ? Noise(x, y - 4, c) : background) << y;
        }
      }
    }
  }
}

TEST(FitImage, ResamplingKeepsAConstantConstantAndAveragesFineDetail) {
  ImageFitSettings s;
  s.size = 16;
  for (ImageFit fit : {ImageFit::kStretch, ImageFit::kCrop, ImageFit::kPad}) {
    s.fit = fit;
    for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{37, 23}, {9, 12}, {200, 31}}) {
      const std::vector<uint8_t> out = Fit(MakeImage(w, h, 3, [](int64_t, int64_t, int) { return 200; }), s);
      const FitGeometry g = PlanFit({w, h}, s);
      for (int64_t y = 0; y < 16; ++y) {
        for (int64_t x = 0; x < 16; ++x) {
          const bool inside = x + g.offset_x >= 0 && x + g.offset_x < g.resized.width && y + g.offset_y >= 0 &&
                              y + g.offset_y < g.resized.height;
          ASSERT_EQ(At(out, 16, 0, y, x), inside ? 200 : 255) << w << "x" << h << " " << ImageFitName(fit);
        }
      }
    }
  }
  // A one-pixel checkerboard shrunk 8x: the filter averages it to mid gray (antialiasing),
  // where point sampling would give black or white.
  s.fit = ImageFit::kStretch;
  s.size = 8;
  const std::vector<uint8_t> out =
      Fit(MakeImage(64, 64, 3, [](int64_t x, int64_t y, int) { return (x + y) % 2 ? 255 : 0; }), s);
  for (uint8_t v : out) EXPECT_NEAR(v, 127.5, 2);
}

TEST(FitImage, OneChannelIsBt601Luma) {
  ImageFitSettings s;
  s.size = 8;
  s.channels = 1;
  const std::vector<uint8_t> red = Fit(MakeImage(8, 8, 3, [](int64_t, int64_t, int c) { return c == 0 ? 255 : 0; }), s);
  EXPECT_EQ(red[0], 76);  // 0.299 * 255 = 76.2
  const std::vector<uint8_t> mix =
      Fit(MakeImage(8, 8, 3, [](int64_t, int64_t, int c) { return c == 0   ? 10
                                                                  : c == 1 ? 200
                                                                           : 90; }), s);
  EXPECT_EQ(mix[0], 131);  // 0.299 * 10 + 0.587 * 200 + 0.114 * 90 = 130.65
}

TEST(FitImage, GrayIsReplicatedIntoThreeChannels) {
  ImageFitSettings s;
  s.size = 8;
  const std::vector<uint8_t> out = Fit(MakeImage(8, 8, 1, [](int64_t x, int64_t, int) { return 30 * x; }), s);
  for (int c = 0; c < 3; ++c) {
    for (int64_t x = 0; x < 8; ++x) EXPECT_EQ(At(out, 8, c, 3, x), 30 * x);
  }
}

TEST(FitImage, AlphaIsCompositedOverTheBackgroundOrKept) {
  // Gray + alpha: value 0 at alpha 0, 128 and 255 in three columns.
  const DecodedImage image = MakeImage(8, 8, 2, [](int64_t x, int64_t, int c) {
    return c == 0 ? 0 : x < 3 ? 0 : x < 6 ? 128 : 255;
  });
  ImageFitSettings s;
  s.size = 8;
  std::vector<uint8_t> out = Fit(image, s);  // over white
  EXPECT_EQ(At(out, 8, 0, 0, 0), 255);
  EXPECT_EQ(At(out, 8, 0, 0, 4), 127);  // 255 * (1 - 128/255)
  EXPECT_EQ(At(out, 8, 0, 0, 7), 0);
  s.alpha = AlphaHandling::kBlack;
  out = Fit(image, s);
  EXPECT_EQ(At(out, 8, 2, 0, 0), 0);
  EXPECT_EQ(At(out, 8, 2, 0, 7), 0);
  s.alpha = AlphaHandling::kKeep;
  ASSERT_EQ(StoredChannels(s), 4);
  out = Fit(image, s);
  EXPECT_EQ(At(out, 8, 3, 0, 0), 0);  // alpha kept
  EXPECT_EQ(At(out, 8, 3, 0, 4), 128);
  EXPECT_EQ(At(out, 8, 3, 0, 7), 255);
  EXPECT_EQ(At(out, 8, 0, 0, 4), 0);  // colour not premultiplied: still 0
  s.channels = 1;
  EXPECT_EQ(StoredChannels(s), 2);
}

TEST(FitImage, KeptAlphaLendsNoColourFromTransparentPixels) {
  // Opaque red beside transparent green, shrunk: the edge stays red (premultiplied
  // resampling), where straight resampling would blend in green.
  const DecodedImage image = MakeImage(32, 32, 4, [](int64_t x, int64_t, int c) {
    if (x < 16) return c == 0 ? 255 : c == 3 ? 255 : 0;
    return c == 1 ? 255 : 0;
  });
  ImageFitSettings s;
  s.size = 8;
  s.fit = ImageFit::kStretch;
  s.alpha = AlphaHandling::kKeep;
  const std::vector<uint8_t> out = Fit(image, s);
  for (int64_t x = 0; x < 8; ++x) {
    if (At(out, 8, 3, 4, x) == 0) continue;
    EXPECT_EQ(At(out, 8, 1, 4, x), 0) << "green at column " << x;
    EXPECT_GE(At(out, 8, 0, 4, x), 250) << "red at column " << x;
  }
}

TEST(ImageFitNames, ParseAndRefuse) {
  EXPECT_EQ(*ParseImageFit("pad"), ImageFit::kPad);
  EXPECT_EQ(*ParseAlphaHandling("keep"), AlphaHandling::kKeep);
  EXPECT_THAT(std::string(ParseImageFit("zoom").status().message()), ::testing::HasSubstr("crop, pad or stretch"));
  EXPECT_FALSE(ParseAlphaHandling("gray").ok());
  EXPECT_FALSE(CheckImageFitSettings({.size = 7}).ok());
  EXPECT_FALSE(CheckImageFitSettings({.size = 64, .channels = 2}).ok());
  EXPECT_TRUE(CheckImageFitSettings({.size = 1024}).ok());
}

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

// PIL's bicubic resampling of a harsh test image (scripts/make_image_goldens.py writes
// tests/golden/image_resize/): the filter is PIL's construction, so every value is within
// 1 of PIL's (which rounds to 8 bits between its two passes; gantry does not).
std::vector<float> Golden(const std::string& name, std::vector<int64_t>* shape) {
  absl::StatusOr<NpyArray> array =
      ReadNpy(std::string(GANTRY_SOURCE_DIR) + "/tests/golden/image_resize/" + name + ".npy");
  EXPECT_TRUE(array.ok()) << array.status();
  if (!array.ok()) return {};
  *shape = array->shape;
  return array->data;
}

TEST(FitImage, MatchesPilBicubic) {
  std::vector<int64_t> shape;
  const std::vector<float> input = Golden("input", &shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{17, 23, 3}));
  const DecodedImage image = MakeImage(23, 17, 3, [&](int64_t x, int64_t y, int c) {
    return static_cast<int>(input[static_cast<size_t>((y * 23 + x) * 3 + c)]);
  });
  struct Case {
    const char* golden;
    int64_t size;
    ImageFit fit;
  };
  for (const Case& c : {Case{"stretch8", 8, ImageFit::kStretch}, Case{"stretch40", 40, ImageFit::kStretch},
                        Case{"crop8", 8, ImageFit::kCrop}}) {
    const std::vector<float> expected = Golden(c.golden, &shape);
    ASSERT_EQ(shape, (std::vector<int64_t>{c.size, c.size, 3}));
    ImageFitSettings s;
    s.size = c.size;
    s.fit = c.fit;
    const std::vector<uint8_t> out = Fit(image, s);
    int worst = 0;
    for (int64_t y = 0; y < c.size; ++y) {
      for (int64_t x = 0; x < c.size; ++x) {
        for (int ch = 0; ch < 3; ++ch) {
          const int pil = static_cast<int>(expected[static_cast<size_t>((y * c.size + x) * 3 + ch)]);
          worst = std::max(worst, std::abs(At(out, c.size, ch, y, x) - pil));
        }
      }
    }
    EXPECT_LE(worst, 1) << c.golden;
  }
}

}  // namespace
}  // namespace gantry
