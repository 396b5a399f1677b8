#include "worker/data/idx_reader.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/datasets.h"
#include "worker/data/mnist_dataset.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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
  // The reader stops at what the header promises, so damage that still inflates shows as
  // a wrong header or extra bytes: the message names a damaged gzip stream as a cause.
  for (size_t at : {size_t{10}, size_t{11}, gz.size() / 3, gz.size() / 2}) {
    std::string bad = gz;
    bad[at] ^= 0xff;
    WriteRaw(Path("bad.gz"), bad);
    EXPECT_THAT(std::string(ReadIdxImages(Path("bad.gz")).status().message()),
                AnyOf(HasSubstr(": corrupt gzip stream ("), HasSubstr(", or a damaged gzip stream")))
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

// A gzip member of `bytes`, compressed in memory.
std::string Gzip(const std::string& bytes) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, bytes.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

int64_t PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST_F(IdxTest, AGzipBombIsRefusedAfterTheHeadersPromise) {
  // 10 images of 28x28 promised, then 256 MiB of zeros: one member with the header, 255
  // more of 1 MiB each (a 300 KB file).
  const std::string mib_of_zeros = Gzip(std::string(1 << 20, '\0'));
  std::string bomb = Gzip(ImagesBytes(10, 28, 28) + std::string(1 << 20, '\0'));
  for (int i = 0; i < 255; ++i) bomb += mib_of_zeros;
  WriteRaw(Path("bomb.gz"), bomb);
  const int64_t peak_before = PeakRssKiB();
  const absl::Status s = ReadIdxImages(Path("bomb.gz")).status();
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(Path("bomb.gz") + ": trailing bytes: header says 10 images of 28x28 (7840 bytes) but more "
                                          "bytes follow (a wrong header, files run together, or a damaged gzip "
                                          "stream?)"));
  // The old reader inflated the whole file first: 256 MiB and more.
  EXPECT_LT(PeakRssKiB() - peak_before, 32 << 10) << "KiB more at the peak";
}

TEST_F(IdxTest, NothingPastThePromisePlusOneByteIsInflated) {
  // The first member's checksum is wrong, but it lies after the promised payload and
  // the one extra byte: a reader that stops there never sees it.
  std::string gz = Gzip(ImagesBytes(3, 2, 4) + std::string(100000, 'x'));
  gz[gz.size() - 8] ^= 0x5a;
  WriteRaw(Path("overlong.gz"), gz);
  EXPECT_THAT(std::string(ReadIdxImages(Path("overlong.gz")).status().message()),
              HasSubstr(": trailing bytes: header says 3 images of 2x4 (24 bytes) but more bytes follow"));
}

TEST_F(IdxTest, AHeaderPromisingMoreThanTheLimitIsRefusedBeforeAnyPayload) {
  const std::string header = Be32(2051) + Be32(0x7fffffff) + Be32(4096) + Be32(4096);
  for (bool gzip : {false, true}) {
    EXPECT_THAT(ImagesError(header, gzip), HasSubstr("bytes), more than the 2147483648 bytes gantry reads from one "
                                                     "IDX file (a damaged header?)"));
  }
  EXPECT_THAT(ImagesError(Be32(2051) + Be32(0x80000000u) + Be32(28) + Be32(28)),
              HasSubstr("bad dimensions 2147483648x28x28 in the IDX header (the count 2147483648 is more than "
                        "2147483647)"));
}

TEST_F(IdxTest, AFolderUnderAnIdxNameIsSaidToBeAFolder) {
  // The example: a folder named train-images-idx3-ubyte was "found neither X nor X.gz".
  std::filesystem::create_directory(Path("train-images-idx3-ubyte"));
  WriteRaw(Path("train-labels-idx1-ubyte"), LabelsBytes());
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()),
              AllOf(HasSubstr(Path("train-images-idx3-ubyte") + ": is a folder, not an IDX file"),
                    Not(HasSubstr("found neither"))));
  // One more: the .gz name as a folder, and a link that loops.
  std::filesystem::remove(Path("train-images-idx3-ubyte"));
  std::filesystem::create_directory(Path("train-images-idx3-ubyte.gz"));
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()),
              HasSubstr(Path("train-images-idx3-ubyte.gz") + ": is a folder"));
  std::filesystem::remove(Path("train-images-idx3-ubyte.gz"));
  std::filesystem::create_symlink(Path("train-images-idx3-ubyte"), Path("train-images-idx3-ubyte"));
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()),
              AllOf(HasSubstr(Path("train-images-idx3-ubyte")), Not(HasSubstr("found neither"))));
}

TEST_F(IdxTest, WhatIsNotARegularFileIsRefusedByNameWithoutWaiting) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", Path("zero").c_str()), 0);
  for (const std::string name : {"fifo", "zero"}) {
    const absl::Status s = ReadIdxImages(Path(name)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(), Path(name) + ": is not a regular file (a FIFO, device or socket, or a link to one); give "
                                        "the path of a file");
  }
  // In a data folder, under the name the loader looks for.
  ASSERT_EQ(mkfifo(Path("train-images-idx3-ubyte").c_str(), 0600), 0);
  WriteRaw(Path("train-labels-idx1-ubyte"), LabelsBytes());
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()),
              HasSubstr(Path("train-images-idx3-ubyte") + ": is not a regular file"));
}

TEST_F(IdxTest, ImagesOfAnotherSizeAreRefusedAfterTheHeaderNamingBothSizes) {
  const ImageRequirement need{.channels = 1, .height = 28, .width = 28, .needed_by = "--model dcgan"};
  // A gzipped 32x32 header with no payload at all: refused for its size, so nothing
  // past the header was read.
  WriteGz(Path("train-images-idx3-ubyte.gz"), Be32(2051) + Be32(1000) + Be32(32) + Be32(32));
  WriteRaw(Path("train-labels-idx1-ubyte"), LabelsBytes(1000));
  const absl::Status s = LoadMnistDir(dir_, true, &need).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Path("train-images-idx3-ubyte.gz") +
                             ": images are 32x32 (1 channel), but --model dcgan needs 28x28 (1 channel) images; "
                             "point --data-dir at a folder of 28x28 images, or choose another --model");
  // Without a requirement the same folder fails on its missing payload.
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()), HasSubstr("truncated: header says 1000 images"));
  // Images of the right size pass, and CheckImagesFit names the file too.
  WriteRaw(Path("train-images-idx3-ubyte"), ImagesBytes(3, 28, 28));  // the raw file wins over .gz
  WriteRaw(Path("train-labels-idx1-ubyte"), LabelsBytes(3));
  absl::StatusOr<ImageDataset> ok = LoadMnistDir(dir_, true, &need);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->images_path, Path("train-images-idx3-ubyte"));
  ok->width = 27;
  EXPECT_THAT(std::string(CheckImagesFit(*ok, need).message()),
              HasSubstr(Path("train-images-idx3-ubyte") + ": images are 28x27 (1 channel)"));
}

TEST_F(IdxTest, LabelCountsAreCheckedBeforeEitherPayloadIsRead) {
  WriteGz(Path("train-images-idx3-ubyte.gz"), Be32(2051) + Be32(5) + Be32(2) + Be32(4));  // payload missing
  WriteRaw(Path("train-labels-idx1-ubyte"), LabelsBytes(4));
  EXPECT_THAT(std::string(LoadMnistDir(dir_).status().message()), HasSubstr(": 5 images but 4 labels in "));
}

// The whole training set of `dir` loads: 60,000 images of 28x28 scaled to [-1, 1] and
// labels 0-9, the first of them `first_label`.
void ExpectWholeTrainingSet(const std::string& dir, uint8_t first_label) {
  absl::StatusOr<ImageDataset> data = LoadMnistDir(dir);
  ASSERT_TRUE(data.ok()) << data.status() << " (Fashion-MNIST: bash scripts/install_deps.sh installs it)";
  EXPECT_EQ(data->count, 60000);
  EXPECT_EQ(data->height, 28);
  EXPECT_EQ(data->width, 28);
  ASSERT_EQ(data->pixels.size(), 60000u * 28 * 28);
  const auto [lo, hi] = std::minmax_element(data->pixels.begin(), data->pixels.end());
  EXPECT_EQ(*lo, -1.0f) << dir;
  EXPECT_EQ(*hi, 1.0f) << dir;
  ASSERT_EQ(data->labels.size(), 60000u);
  EXPECT_EQ(data->labels[0], first_label);
  for (uint8_t l : data->labels) ASSERT_LE(l, 9);
}

// Fashion-MNIST, the default dataset (Debian's dataset-fashion-mnist, which
// scripts/install_deps.sh installs: the test command needs it). Its first training
// image is an ankle boot (class 9).
TEST(RealIdxFiles, FashionMnistLoadsWhole) { ExpectWholeTrainingSet(DefaultDataDir("fashion-mnist"), 9); }

#ifdef GANTRY_MNIST_DIR
// Digit MNIST, where the build was given its folder (cmake -DGANTRY_MNIST_DIR=DIR); the
// first training digit is a 5.
TEST(RealIdxFiles, DigitMnistLoadsWhole) { ExpectWholeTrainingSet(GANTRY_MNIST_DIR, 5); }
#endif

}  // namespace
}  // namespace gantry
