#include "worker/data/idx_reader.h"

#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/datasets.h"
#include "worker/data/mnist_dataset.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The project's shared folder sits beside the checkout (../shared), in CI too.
const std::string kRealMnist = std::string(GANTRY_SOURCE_DIR) + "/../shared/data/mnist";

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// 3 images of 2x4 with pixel values 0..23, and 3 labels.
std::string Pixels(size_t n) {
  std::string p;
  for (size_t i = 0; i < n; ++i) p.push_back(static_cast<char>(i * 11 % 256));
  return p;
}
std::string ImagesBytes(uint32_t count = 3, uint32_t rows = 2, uint32_t cols = 4) {
  return Be32(2051) + Be32(count) + Be32(rows) + Be32(cols) + Pixels(size_t{count} * rows * cols);
}
std::string LabelsBytes(uint32_t count = 3) { return Be32(2049) + Be32(count) + std::string(count, '\x07'); }

void WriteRaw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
void WriteGz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}
std::string ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/gantry_idx_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // The error ReadIdxImages gives for a file holding `bytes`; must start with the path.
  std::string ImagesError(const std::string& bytes, bool gzip = false) {
    const std::string path = Path(gzip ? "images.gz" : "images");
    gzip ? WriteGz(path, bytes) : WriteRaw(path, bytes);
    absl::StatusOr<IdxImages> images = ReadIdxImages(path);
    if (images.ok()) return "<ok>";
    EXPECT_THAT(std::string(images.status().message()), StartsWith(path + ": "));
    return std::string(images.status().message());
  }

  std::string dir_;
};

TEST_F(IdxTest, ReadsRawAndGzippedImages) {
  for (bool gzip : {false, true}) {
    const std::string path = Path(gzip ? "i.gz" : "i");
    gzip ? WriteGz(path, ImagesBytes()) : WriteRaw(path, ImagesBytes());
    absl::StatusOr<IdxImages> images = ReadIdxImages(path);
    ASSERT_TRUE(images.ok()) << images.status();
    EXPECT_EQ(images->count, 3);
    EXPECT_EQ(images->rows, 2);
    EXPECT_EQ(images->cols, 4);
    EXPECT_EQ(std::string(images->pixels.begin(), images->pixels.end()), Pixels(24));
  }
}

TEST_F(IdxTest, ReadsLabelsAndConcatenatedGzipMembers) {
  const std::string bytes = LabelsBytes(5);
  WriteGz(Path("a.gz"), bytes.substr(0, 6));
  WriteGz(Path("b.gz"), bytes.substr(6));
  WriteRaw(Path("l.gz"), ReadRaw(Path("a.gz")) + ReadRaw(Path("b.gz")));
  absl::StatusOr<std::vector<uint8_t>> labels = ReadIdxLabels(Path("l.gz"));
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(*labels, std::vector<uint8_t>(5, 7));
}

TEST_F(IdxTest, BadMagicSaysWhichKindOfFileItIs) {
  EXPECT_THAT(ImagesError(LabelsBytes()),
              HasSubstr(": bad magic 2049, expected 2051 (is this a labels file?)"));
  WriteGz(Path("imgs.gz"), ImagesBytes());
  absl::StatusOr<std::vector<uint8_t>> labels = ReadIdxLabels(Path("imgs.gz"));
  EXPECT_EQ(labels.status().message(),
            Path("imgs.gz") + ": bad magic 2051, expected 2049 (is this an images file?)");
  EXPECT_THAT(ImagesError("\x89PNG\r\n\x1a\n........"), HasSubstr("(not an IDX file, or not gzip)"));
}

TEST_F(IdxTest, TruncatedPayloadRawAndGzipped) {
  const std::string bytes = ImagesBytes();
  for (bool gzip : {false, true}) {
    EXPECT_THAT(ImagesError(bytes.substr(0, bytes.size() - 4), gzip),
                HasSubstr(": truncated: header says 3 images of 2x4 (24 bytes) but only 20 bytes follow"));
  }
  EXPECT_THAT(ImagesError(bytes.substr(0, 10)),
              HasSubstr("truncated: only 10 bytes, but an IDX images header is 16"));
  EXPECT_THAT(ImagesError(""), HasSubstr("truncated: only 0 bytes, too short for an IDX header"));
}

TEST_F(IdxTest, TrailingBytesAreAnError) {
  EXPECT_THAT(ImagesError(ImagesBytes() + "junk!"),
              HasSubstr("5 trailing bytes: header says 3 images of 2x4 (24 bytes) but 29 bytes follow"));
}

TEST_F(IdxTest, ZeroOrHugeDimensions) {
  EXPECT_THAT(ImagesError(ImagesBytes(3, 0, 4)), HasSubstr("bad dimensions 3x0x4"));
  EXPECT_THAT(ImagesError(ImagesBytes(0, 2, 4)), HasSubstr("bad dimensions 0x2x4"));
  EXPECT_THAT(ImagesError(Be32(2051) + Be32(1) + Be32(5000) + Be32(1)), HasSubstr("at most 4096"));
  WriteRaw(Path("l"), LabelsBytes(0));
  EXPECT_THAT(std::string(ReadIdxLabels(Path("l")).status().message()), HasSubstr("bad dimensions 0 "));
}

TEST_F(IdxTest, TruncatedGzipStream) {
  WriteGz(Path("full.gz"), ImagesBytes(40, 28, 28));
  const std::string gz = ReadRaw(Path("full.gz"));
  for (size_t keep : {size_t{12}, gz.size() / 2, gz.size() - 5, gz.size() - 1}) {
    WriteRaw(Path("cut.gz"), gz.substr(0, keep));
    EXPECT_THAT(std::string(ReadIdxImages(Path("cut.gz")).status().message()),
                HasSubstr(": corrupt gzip stream (truncated"))
        << "keeping " << keep << " of " << gz.size() << " bytes";
  }
}

TEST_F(IdxTest, CorruptGzipBytes) {
  WriteGz(Path("full.gz"), ImagesBytes(40, 28, 28));
  const std::string gz = ReadRaw(Path("full.gz"));
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 0x5a;  // the trailer's CRC-32
  WriteRaw(Path("bad.gz"), bad_crc);
  EXPECT_THAT(std::string(ReadIdxImages(Path("bad.gz")).status().message()),
              HasSubstr(Path("bad.gz") + ": corrupt gzip stream (incorrect data check)"));
  for (size_t at : {size_t{10}, size_t{11}, gz.size() / 3, gz.size() / 2}) {
    std::string bad = gz;
    bad[at] ^= 0xff;
    WriteRaw(Path("bad.gz"), bad);
    EXPECT_THAT(std::string(ReadIdxImages(Path("bad.gz")).status().message()),
                HasSubstr(": corrupt gzip stream ("))
        << "flipped byte " << at;
  }
  WriteRaw(Path("tail.gz"), gz + "xyz");
  EXPECT_THAT(std::string(ReadIdxImages(Path("tail.gz")).status().message()),
              HasSubstr("corrupt gzip stream (3 bytes of garbage after the end of the stream)"));
}

TEST_F(IdxTest, MissingFileOrDirectory) {
  const absl::Status missing = ReadIdxImages(Path("nope")).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), Path("nope") + ": cannot open: No such file or directory");
  EXPECT_THAT(std::string(ReadIdxLabels(dir_).status().message()), HasSubstr(": is a directory"));
}

TEST_F(IdxTest, LoadMnistDirScalesPixelsAndPicksTheSet) {
  WriteRaw(Path("train-images-idx3-ubyte"), ImagesBytes());
  WriteGz(Path("train-labels-idx1-ubyte.gz"), LabelsBytes());
  WriteGz(Path("t10k-images-idx3-ubyte.gz"), ImagesBytes(1, 3, 3));
  WriteRaw(Path("t10k-labels-idx1-ubyte"), LabelsBytes(1));
  absl::StatusOr<ImageDataset> train = LoadMnistDir(dir_);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->count, 3);
  EXPECT_EQ(train->channels, 1);
  EXPECT_EQ(train->height, 2);
  EXPECT_EQ(train->width, 4);
  ASSERT_EQ(train->pixels.size(), 24u);
  EXPECT_EQ(train->pixels[0], -1.0f);                     // byte 0
  EXPECT_FLOAT_EQ(train->pixels[1], 11 / 127.5f - 1.0f);  // byte 11
  EXPECT_EQ(train->labels, std::vector<uint8_t>(3, 7));
  absl::StatusOr<ImageDataset> test = LoadMnistDir(dir_, /*train=*/false);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->count, 1);
  EXPECT_EQ(test->height, 3);
}

TEST_F(IdxTest, LoadMnistDirErrors) {
  EXPECT_THAT(std::string(LoadMnistDir("").status().message()), HasSubstr("--data-dir"));
  EXPECT_THAT(std::string(LoadMnistDir(Path("absent")).status().message()),
              AllOf(StartsWith(Path("absent") + ": "), HasSubstr("No such file or directory"),
                    HasSubstr("--data-dir")));
  EXPECT_THAT(
      std::string(LoadMnistDir(dir_).status().message()),
      AllOf(StartsWith(dir_ + ": "), HasSubstr("train-images-idx3-ubyte.gz"), HasSubstr("--data-dir")));
  WriteRaw(Path("train-images-idx3-ubyte"), ImagesBytes());
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()),
              HasSubstr("neither train-labels-idx1-ubyte nor"));
  WriteGz(Path("train-labels-idx1-ubyte.gz"), LabelsBytes(2));
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()), HasSubstr(": 3 images but 2 labels in "));
  WriteRaw(Path("train-labels-idx1-ubyte"), ImagesBytes());  // the raw file wins over .gz
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()), HasSubstr("(is this an images file?)"));
}

TEST(RealMnist, TrainLabels) {
  const std::string path = kRealMnist + "/train-labels-idx1-ubyte.gz";
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << path << " is not here";
  absl::StatusOr<std::vector<uint8_t>> labels = ReadIdxLabels(path);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 60000u);
  EXPECT_EQ((*labels)[0], 5);  // the first training digit is a 5
  for (uint8_t l : *labels) ASSERT_LE(l, 9);
}

// Also run on Fashion-MNIST where its Debian package is installed.
TEST(RealMnist, LoadsWholeTrainingSets) {
  bool any = false;
  for (const std::string& dir : {kRealMnist, DefaultDataDir("fashion-mnist")}) {
    if (access((dir + "/train-images-idx3-ubyte.gz").c_str(), R_OK) != 0) continue;
    any = true;
    absl::StatusOr<ImageDataset> data = LoadMnistDir(dir);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ(data->count, 60000);
    EXPECT_EQ(data->height, 28);
    EXPECT_EQ(data->width, 28);
    ASSERT_EQ(data->pixels.size(), 60000u * 28 * 28);
    const auto [lo, hi] = std::minmax_element(data->pixels.begin(), data->pixels.end());
    EXPECT_EQ(*lo, -1.0f) << dir;
    EXPECT_EQ(*hi, 1.0f) << dir;
  }
  if (!any) GTEST_SKIP() << "no MNIST-format training set on this machine";
}

}  // namespace
}  // namespace gantry
