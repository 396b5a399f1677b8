// The decoders (worker/formats/image_decode.h) on every kind of file make-dataset must
// read, made here with the reference encoders (tests/images/test_images.h), and on the
// damaged and hostile files it must refuse, each with the status code that names the
// kind of failure.
#include "worker/formats/image_decode.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/images/test_images.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using namespace test_images;

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

DecodedImage MustDecode(const std::string& file, const ImageDecodeOptions& options = {}) {
  absl::StatusOr<DecodedImage> image = DecodeImage(Bytes(file), options);
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *std::move(image) : DecodedImage{};
}

std::vector<uint8_t> To8(const std::vector<uint16_t>& samples) { return {samples.begin(), samples.end()}; }

// The mean absolute difference of two equally long byte arrays.
double MeanAbsDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  double sum = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) sum += std::abs(int(a[i]) - int(b[i]));
  return a.empty() ? 0 : sum / static_cast<double>(a.size());
}

TEST(DecodePng, EightBitKindsComeThroughExactly) {
  struct Case {
    PngKind kind;
    int channels;
  };
  for (const Case& c :
       {Case{PngKind::kGray, 1}, Case{PngKind::kGrayAlpha, 2}, Case{PngKind::kRgb, 3}, Case{PngKind::kRgba, 4}}) {
    const std::vector<uint16_t> samples = Pattern(13, 9, c.channels, 8, c.channels);
    const DecodedImage image = MustDecode(Png({.width = 13, .height = 9, .kind = c.kind}, samples));
    EXPECT_EQ(image.format, ImageFormat::kPng);
    EXPECT_EQ(image.width, 13);
    EXPECT_EQ(image.height, 9);
    EXPECT_EQ(image.file.width, 13);
    EXPECT_EQ(image.channels, c.channels);
    EXPECT_EQ(image.pixels, To8(samples)) << "channels " << c.channels;
  }
}

TEST(DecodePng, SixteenBitSamplesAreRoundedToEight) {
  for (PngKind kind : {PngKind::kGray, PngKind::kRgba}) {
    const int channels = kind == PngKind::kGray ? 1 : 4;
    std::vector<uint16_t> samples = Pattern(8, 8, channels, 16, 3);
    samples[0] = 0x7F80;  // 32640 * 255 / 65535 = 127.0 (plain truncation of 0x7F80 >> 8 gives 127 too)
    samples[1] = 0x80FF;  // 33023 * 255 / 65535 = 128.49: 128, where >> 8 gives 128
    samples[2] = 0xFF7F;  // 65407 * 255 / 65535 = 254.50: rounds to 255, where >> 8 gives 255
    samples[3] = 0x0081;  // 129 * 255 / 65535 = 0.502: rounds to 1, where >> 8 gives 0
    const DecodedImage image = MustDecode(Png({.width = 8, .height = 8, .kind = kind, .bit_depth = 16}, samples));
    ASSERT_EQ(image.channels, channels);
    for (size_t i = 0; i < samples.size(); ++i) {
      const double exact = samples[i] * 255.0 / 65535.0;
      EXPECT_LE(std::abs(image.pixels[i] - exact), 0.5 + 1e-9) << "sample " << i << " = " << samples[i];
    }
    EXPECT_EQ(image.pixels[3], 1);
  }
}

TEST(DecodePng, LowBitDepthGrayIsScaledToEightBits) {
  for (int bits : {1, 2, 4}) {
    const std::vector<uint16_t> samples = Pattern(11, 5, 1, bits, bits);
    const DecodedImage image =
        MustDecode(Png({.width = 11, .height = 5, .kind = PngKind::kGray, .bit_depth = bits}, samples));
    ASSERT_EQ(image.channels, 1);
    const int max = (1 << bits) - 1;
    for (size_t i = 0; i < samples.size(); ++i) EXPECT_EQ(image.pixels[i], samples[i] * 255 / max) << bits;
  }
}

TEST(DecodePng, PaletteWithTransparencyBecomesRgba) {
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  const std::vector<uint8_t> alphas = {0, 128, 255};  // the fourth entry has none: opaque
  std::vector<uint16_t> indices(6 * 4);
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<uint16_t>(i % 4);
  const DecodedImage image = MustDecode(Png(
      {.width = 6, .height = 4, .kind = PngKind::kPalette, .bit_depth = 8, .palette = palette, .palette_alpha = alphas},
      indices));
  ASSERT_EQ(image.channels, 4);
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t k = indices[i];
    EXPECT_EQ(image.pixels[4 * i], palette[3 * k]);
    EXPECT_EQ(image.pixels[4 * i + 1], palette[3 * k + 1]);
    EXPECT_EQ(image.pixels[4 * i + 2], palette[3 * k + 2]);
    EXPECT_EQ(image.pixels[4 * i + 3], k < alphas.size() ? alphas[k] : 255);
  }
  // Without tRNS, a palette gives RGB.
  const DecodedImage opaque = MustDecode(
      Png({.width = 6, .height = 4, .kind = PngKind::kPalette, .bit_depth = 8, .palette = palette}, indices));
  EXPECT_EQ(opaque.channels, 3);
}

TEST(DecodePng, InterlacedGivesTheSamePixels) {
  for (PngKind kind : {PngKind::kRgb, PngKind::kGrayAlpha}) {
    const int channels = kind == PngKind::kRgb ? 3 : 2;
    const std::vector<uint16_t> samples = Pattern(17, 11, channels, 8, 5);
    const DecodedImage image = MustDecode(Png({.width = 17, .height = 11, .kind = kind, .interlaced = true}, samples));
    EXPECT_EQ(image.pixels, To8(samples));
  }
}

TEST(DecodeJpeg, BaselineAndProgressiveAreCloseToTheSource) {
  const std::vector<uint8_t> source = Pattern8(64, 48, 3, 1);
  for (bool progressive : {false, true}) {
    const DecodedImage image =
        MustDecode(Jpeg({.width = 64, .height = 48, .progressive = progressive, .quality = 100}, source));
    EXPECT_EQ(image.format, ImageFormat::kJpeg);
    EXPECT_EQ(image.channels, 3);
    EXPECT_EQ(image.width, 64);
    EXPECT_EQ(image.height, 48);
    EXPECT_LT(MeanAbsDiff(image.pixels, source), 2.0) << "progressive " << progressive;
  }
}

TEST(DecodeJpeg, GrayscaleStaysOneChannel) {
  const std::vector<uint8_t> source = Pattern8(40, 40, 1, 2);
  const DecodedImage image = MustDecode(Jpeg({.width = 40, .height = 40, .components = 1, .quality = 100}, source));
  EXPECT_EQ(image.channels, 1);
  EXPECT_LT(MeanAbsDiff(image.pixels, source), 1.5);
}

TEST(DecodeJpeg, AdobeCmykIsInvertedAndConvertedToRgb) {
  // Photoshop's convention, which libjpeg marks with an Adobe APP14 marker: the file
  // holds 255 - ink. Inks C=0 M=255 Y=255 K=0 are red; C=M=Y=0 K=128 a mid gray.
  std::vector<uint8_t> stored;
  for (int i = 0; i < 16 * 16; ++i) {
    const bool red = i < 128;
    for (int ink : red ? std::vector<int>{0, 255, 255, 0} : std::vector<int>{0, 0, 0, 128}) {
      stored.push_back(static_cast<uint8_t>(255 - ink));
    }
  }
  const DecodedImage image = MustDecode(Jpeg({.width = 16, .height = 16, .components = 4, .quality = 100}, stored));
  ASSERT_EQ(image.channels, 3);
  EXPECT_NEAR(image.pixels[0], 255, 3);  // red: (255 - 0)(255 - 0)/255
  EXPECT_NEAR(image.pixels[1], 0, 3);
  EXPECT_NEAR(image.pixels[2], 0, 3);
  const size_t gray = 3 * (16 * 16 - 1);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(image.pixels[gray + c], 127, 3);  // (255)(255 - 128)/255
}

TEST(DecodeJpeg, ReducesWhileDecodingButNeverBelowTheLeastSize) {
  const std::string file = Jpeg({.width = 256, .height = 200}, Pattern8(256, 200, 3, 3));
  ImageDecodeOptions options;
  options.least_size = [](ImageSize) { return ImageSize{64, 50}; };
  const DecodedImage reduced = MustDecode(file, options);
  EXPECT_EQ(reduced.file.width, 256);
  EXPECT_EQ(reduced.file.height, 200);
  EXPECT_EQ(reduced.width, 64);  // 1/4
  EXPECT_EQ(reduced.height, 50);
  options.least_size = [](ImageSize) { return ImageSize{65, 10}; };
  const DecodedImage three_eighths = MustDecode(file, options);
  EXPECT_EQ(three_eighths.width, 96);  // 3/8: the least k/8 that keeps 65
  const DecodedImage full = MustDecode(file);
  EXPECT_EQ(full.width, 256);
}

TEST(DecodeWebp, LosslessIsExactAndLossyClose) {
  const std::vector<uint8_t> rgba = Pattern8(30, 20, 4, 4);
  const DecodedImage lossless = MustDecode(Webp(30, 20, 4, rgba, /*lossless=*/true));
  EXPECT_EQ(lossless.format, ImageFormat::kWebp);
  EXPECT_EQ(lossless.channels, 4);
  EXPECT_EQ(lossless.pixels, rgba);
  const std::vector<uint8_t> rgb = Pattern8(32, 32, 3, 5);
  const DecodedImage lossy = MustDecode(Webp(32, 32, 3, rgb, /*lossless=*/false));
  EXPECT_EQ(lossy.channels, 3);
  EXPECT_LT(MeanAbsDiff(lossy.pixels, rgb), 15.0);  // the pattern's wrap-around edges cost lossy WebP ~8; noise ~85
}

TEST(DecodeImage, TheContentDecidesTheFormat) {
  EXPECT_EQ(SniffImageFormat(Bytes(Png({}, Pattern(8, 8, 3, 8)))), ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat(Bytes(Jpeg({}, Pattern8(8, 8, 3)))), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat(Bytes(Webp(8, 8, 3, Pattern8(8, 8, 3), true))), ImageFormat::kWebp);
  EXPECT_EQ(SniffImageFormat(Bytes(std::string("GIF89a\x01\x00\x01\x00", 10))), ImageFormat::kGif);
  EXPECT_EQ(SniffImageFormat(Bytes("hello, world")), ImageFormat::kUnknown);
}

TEST(DecodeImage, RefusalsSayWhatKindOfFailure) {
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeImage(Bytes("just text\n"), {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeImage({}, {}).status()));
  const absl::Status gif = DecodeImage(Bytes(std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00", 13)), {}).status();
  EXPECT_TRUE(absl::IsUnimplemented(gif)) << gif;
  EXPECT_THAT(std::string(gif.message()), HasSubstr("GIF"));
}

TEST(DecodeImage, TruncatedFilesAreOutOfRange) {
  const std::string png = Png({.width = 40, .height = 40, .kind = PngKind::kRgba}, Pattern(40, 40, 4, 8, 1));
  const std::string jpeg = Jpeg({.width = 64, .height = 64}, Pattern8(64, 64, 3, 1));
  const std::string webp = Webp(40, 40, 3, Pattern8(40, 40, 3, 1), /*lossless=*/false);
  for (const std::string* file : {&png, &jpeg, &webp}) {
    for (size_t keep : {file->size() / 2, file->size() - 40, size_t{40}}) {
      const absl::Status st = DecodeImage(Bytes(file->substr(0, keep)), {}).status();
      EXPECT_TRUE(absl::IsOutOfRange(st)) << keep << " of " << file->size() << " bytes: " << st;
    }
  }
}

TEST(DecodeImage, CorruptFilesAreDataLoss) {
  std::string png = Png({.width = 40, .height = 40, .kind = PngKind::kRgb}, Pattern(40, 40, 3, 8, 2));
  png[png.size() / 2] ^= 0x55;  // inside IDAT: its CRC no longer matches
  const absl::Status png_status = DecodeImage(Bytes(png), {}).status();
  EXPECT_TRUE(absl::IsDataLoss(png_status)) << png_status;
  EXPECT_THAT(std::string(png_status.message()), HasSubstr("PNG, in the image data"));

  // A JPEG whose start-of-frame says 0 components.
  std::string jpeg = Jpeg({.width = 32, .height = 32}, Pattern8(32, 32, 3, 2));
  const size_t sof = jpeg.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  jpeg[sof + 9] = 0;  // FF C0, length (2), precision, height (2), width (2), components
  const absl::Status jpeg_status = DecodeImage(Bytes(jpeg), {}).status();
  EXPECT_TRUE(absl::IsDataLoss(jpeg_status)) << jpeg_status;

  std::string webp = Webp(32, 32, 3, Pattern8(32, 32, 3, 2), /*lossless=*/true);
  for (size_t i = 30; i < 60; ++i) webp[i] = static_cast<char>(0xA5);
  const absl::Status webp_status = DecodeImage(Bytes(webp), {}).status();
  EXPECT_FALSE(webp_status.ok());
  EXPECT_TRUE(absl::IsDataLoss(webp_status) || absl::IsOutOfRange(webp_status)) << webp_status;
}

TEST(DecodeImage, AHugeHeaderIsRefusedBeforeAnythingIsAllocated) {
  // 100000 x 100000 RGB would be 30 GB: refused from the header, at once.
  const std::string bomb = HugePngHeader(100000, 100000);
  const auto start = std::chrono::steady_clock::now();
  const absl::Status st = DecodeImage(Bytes(bomb), {}).status();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(absl::IsResourceExhausted(st)) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("100000x100000"));
  EXPECT_LT(seconds, 0.5);

  // The same limit in every format, from each header.
  ImageDecodeOptions small;
  small.max_pixels = 1000;
  for (const std::string& file :
       {Png({.width = 40, .height = 40}, Pattern(40, 40, 3, 8)), Jpeg({.width = 40, .height = 40}, Pattern8(40, 40, 3)),
        Webp(40, 40, 3, Pattern8(40, 40, 3), true)}) {
    const absl::Status refused = DecodeImage(Bytes(file), small).status();
    EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  }
}

TEST(DecodeImage, ASideBelowTheMinimumIsRefused) {
  ImageDecodeOptions options;
  options.min_side = 8;
  const absl::Status st = DecodeImage(Bytes(Png({.width = 4, .height = 30}, Pattern(4, 30, 3, 8))), options).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_TRUE(DecodeImage(Bytes(Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8))), options).ok());
}

}  // namespace
}  // namespace gantry
