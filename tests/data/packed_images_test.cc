// The packed image set's writer and reader (worker/data/packed_images_writer.h,
// packed_images.h): the round trip, the layout (64-byte aligned records, canonical
// bytes), publishing without replacing, and every kind of damage refused at open by
// name, with the fix.
#include "worker/data/packed_images.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/packed_images_format.h"
#include "worker/data/packed_images_writer.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string PackedFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WritePackedBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<uint8_t> TestRecord(int64_t bytes, int seed) {
  std::vector<uint8_t> r(static_cast<size_t>(bytes));
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<uint8_t>(i * 7 + seed * 31);
  return r;
}

PackedImagesInfo TestLayout(int64_t size, int64_t channels, const std::string& alpha = "white") {
  PackedImagesInfo layout;
  layout.image_size = size;
  layout.channels = channels;
  layout.fit = "crop";
  layout.alpha = alpha;
  layout.filter = "catmull-rom";
  return layout;
}

class PackedImagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/packed_images_test";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // A set of `count` records of 9x9x3 (stride 256: 243 bytes + 13 of padding) with labels
  // i % 2 and classes "cat", "dog", or unlabelled.
  std::string WriteSet(int count, bool labelled = true, const std::string& name = "set.gpk") {
    const std::string path = dir_ + "/" + name;
    auto writer = PackedImagesWriter::Create(path, TestLayout(9, 3));
    EXPECT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < count; ++i) {
      const std::string source = i == 1 ? std::string("caf\xe9/bad-utf8.png") : "img" + std::to_string(i) + ".png";
      EXPECT_TRUE((*writer)->Append(TestRecord(243, i), labelled ? i % 2 : -1, source).ok());
    }
    const absl::Status finished =
        (*writer)->Finish(labelled ? std::vector<std::string>{"cat", "dog"} : std::vector<std::string>{});
    EXPECT_TRUE(finished.ok()) << finished;
    return path;
  }

  // Open's refusal of `bytes` written as a file.
  absl::Status OpenBytes(const std::string& bytes) {
    const std::string path = dir_ + "/damaged.gpk";
    WritePackedBytes(path, bytes);
    return PackedImages::Open(path).status();
  }

  std::string dir_;
};

TEST_F(PackedImagesTest, RoundTripsRecordsLabelsSourcesAndSettings) {
  const std::string path = WriteSet(5);
  absl::StatusOr<std::unique_ptr<PackedImages>> set = PackedImages::Open(path);
  ASSERT_TRUE(set.ok()) << set.status();
  const PackedImages& images = **set;
  EXPECT_EQ(images.path(), path);
  EXPECT_EQ(images.info().image_size, 9);
  EXPECT_EQ(images.info().channels, 3);
  EXPECT_EQ(images.info().count, 5);
  EXPECT_EQ(images.info().fit, "crop");
  EXPECT_EQ(images.info().alpha, "white");
  EXPECT_EQ(images.info().filter, "catmull-rom");
  EXPECT_EQ(images.info().class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(images.record_bytes(), 243);
  for (int i = 0; i < 5; ++i) {
    const std::vector<uint8_t> expected = TestRecord(243, i);
    EXPECT_EQ(std::memcmp(images.record(i), expected.data(), 243), 0) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(images.record(i)) % 64, 0u) << "record " << i << " is 64-byte aligned";
    EXPECT_EQ(images.label(i), i % 2);
  }
  EXPECT_EQ(images.source(0), "img0.png");
  EXPECT_EQ(images.source(1), std::string("caf\xe9/bad-utf8.png"));
  EXPECT_EQ(images.source(4), "img4.png");
  // 128 + 5 * 256 + 5 * 16 + the strings.
  EXPECT_EQ(std::filesystem::file_size(path) % 1, 0u);
  EXPECT_GT(std::filesystem::file_size(path), 128u + 5 * 256 + 5 * 16);
}

TEST_F(PackedImagesTest, UnlabelledSetsSayMinusOne) {
  auto set = PackedImages::Open(WriteSet(3, /*labelled=*/false));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE((*set)->info().class_names.empty());
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*set)->label(i), -1);
}

TEST_F(PackedImagesTest, TheBytesAreCanonical) {
  // The same records written twice give the same file.
  EXPECT_EQ(PackedFileBytes(WriteSet(4, true, "a.gpk")), PackedFileBytes(WriteSet(4, true, "b.gpk")));
}

TEST_F(PackedImagesTest, TheWriterNeverReplacesAFileAndLeavesNoTemporaryFile) {
  const std::string path = dir_ + "/taken.gpk";
  WritePackedBytes(path, "the user's");
  const absl::Status refused = PackedImagesWriter::Create(path, TestLayout(9, 3)).status();
  EXPECT_TRUE(absl::IsAlreadyExists(refused)) << refused;
  EXPECT_EQ(PackedFileBytes(path), "the user's");

  // A file that appears while the records are written is not replaced either.
  const std::string late = dir_ + "/late.gpk";
  auto writer = PackedImagesWriter::Create(late, TestLayout(9, 3));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(TestRecord(243, 0), -1, "x.png").ok());
  WritePackedBytes(late, "arrived meanwhile");
  const absl::Status finished = (*writer)->Finish({});
  EXPECT_TRUE(absl::IsAlreadyExists(finished)) << finished;
  EXPECT_EQ(PackedFileBytes(late), "arrived meanwhile");

  // Abandoned (or destroyed unfinished): its temporary file is gone.
  {
    auto abandoned = PackedImagesWriter::Create(dir_ + "/never.gpk", TestLayout(9, 3));
    ASSERT_TRUE(abandoned.ok());
    EXPECT_TRUE(std::filesystem::exists((*abandoned)->temporary_path()));
    ASSERT_TRUE((*abandoned)->Append(TestRecord(243, 0), -1, "x.png").ok());
  }
  WriteSet(2);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"late.gpk", "set.gpk", "taken.gpk"}));
}

TEST_F(PackedImagesTest, TheWriterRefusesWhatItCannotWrite) {
  EXPECT_FALSE(PackedImagesWriter::Create(dir_ + "/x.gpk", TestLayout(9, 3, "keep")).ok());  // keep needs 2 or 4
  auto writer = PackedImagesWriter::Create(dir_ + "/x.gpk", TestLayout(9, 3));
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE((*writer)->Append(TestRecord(242, 0), 0, "short").ok());
  EXPECT_FALSE((*writer)->Finish({"cat"}).ok());  // no records
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x.gpk"));
  auto labels = PackedImagesWriter::Create(dir_ + "/y.gpk", TestLayout(9, 3));
  ASSERT_TRUE((*labels)->Append(TestRecord(243, 0), 1, "a").ok());
  EXPECT_FALSE((*labels)->Finish({"only-one-class"}).ok());  // label 1 has no name
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/y.gpk"));
}

TEST_F(PackedImagesTest, DamageIsRefusedAtOpenByNameWithTheFix) {
  const std::string good = PackedFileBytes(WriteSet(3));
  const std::string path = dir_ + "/damaged.gpk";
  auto refused = [&](std::string bytes) { return OpenBytes(bytes); };
  const auto names_the_file = AllOf(HasSubstr(path), HasSubstr("remake it with gantry-worker make-dataset"));

  std::string record = good;
  record[128 + 256 + 10] ^= 1;  // a byte of record 1
  absl::Status st = refused(record);
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_THAT(std::string(st.message()),
              AllOf(names_the_file, HasSubstr("record 1"), HasSubstr("CRC"), HasSubstr("caf\\xe9/bad-utf8.png")));

  std::string padding = good;
  padding[128 + 256 + 250] = 1;  // after record 1's 243 bytes
  EXPECT_THAT(std::string(refused(padding).message()), HasSubstr("padding"));

  std::string header = good;
  header[20] ^= 1;  // the image size
  st = refused(header);
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_THAT(std::string(st.message()), AllOf(names_the_file, HasSubstr("header's CRC")));

  std::string index = good;
  index[128 + 3 * 256 + 5] ^= 1;  // record 0's label
  EXPECT_THAT(std::string(refused(index).message()), AllOf(names_the_file, HasSubstr("index and strings")));

  for (size_t keep : {good.size() - 1, size_t{128 + 256}, size_t{100}, size_t{3}}) {
    st = refused(good.substr(0, keep));
    EXPECT_TRUE(absl::IsDataLoss(st) || absl::IsInvalidArgument(st)) << st;
    EXPECT_THAT(std::string(st.message()), names_the_file) << keep;
  }
  EXPECT_THAT(std::string(refused(good.substr(0, good.size() - 1)).message()), HasSubstr("truncated"));
  EXPECT_THAT(std::string(refused(good + "x").message()), HasSubstr("1 bytes after"));
  EXPECT_THAT(std::string(refused("").message()), HasSubstr("empty"));

  std::string magic = good;
  magic[0] = 'X';
  st = refused(magic);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(std::string(st.message()), AllOf(names_the_file, HasSubstr("not a packed image set")));
}

// A header that lies, with a CRC that matches (so only the consistency checks can tell).
TEST_F(PackedImagesTest, AHeaderThatLiesIsRefused) {
  const std::string good = PackedFileBytes(WriteSet(3));
  absl::StatusOr<PackedHeader> h = DecodePackedHeader(good.substr(0, 128), static_cast<int64_t>(good.size()));
  ASSERT_TRUE(h.ok()) << h.status();
  auto with_header = [&](const PackedHeader& lie) { return EncodePackedHeader(lie) + good.substr(128); };
  struct Lie {
    const char* what;
    std::function<void(PackedHeader&)> change;
    const char* says;
  };
  const std::vector<Lie> lies = {
      {"a count that overflows", [](PackedHeader& x) { x.count = int64_t{1} << 60; }, "index offset"},
      {"one record more", [](PackedHeader& x) { x.count += 1; }, "index offset"},
      {"an image size out of range", [](PackedHeader& x) { x.image_size = 4096; }, "image size"},
      {"five channels", [](PackedHeader& x) { x.channels = 5; }, "channels"},
      {"a stride that does not fit", [](PackedHeader& x) { x.record_stride = 64; }, "stride"},
      {"strings running past the end", [](PackedHeader& x) { x.strings_bytes += 100; }, "file bytes"},
      {"no records", [](PackedHeader& x) { x.count = 0; }, "no records"},
      {"too many classes", [](PackedHeader& x) { x.class_count = x.strings_bytes; }, "class names"},
      {"a file size beyond int64", [](PackedHeader& x) { x.file_bytes = -1; }, "overflows"},
  };
  for (const Lie& lie : lies) {
    PackedHeader changed = *h;
    lie.change(changed);
    const absl::Status st = OpenBytes(with_header(changed));
    EXPECT_TRUE(absl::IsDataLoss(st)) << lie.what << ": " << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(lie.says)) << lie.what;
  }
  // Version 2, with its CRC right: refused as another version.
  std::string v2 = good;
  v2[8] = 2;
  const uint32_t crc = PackedCrc(reinterpret_cast<const uint8_t*>(v2.data()), 124);
  std::memcpy(v2.data() + 124, &crc, 4);
  const absl::Status st = OpenBytes(v2);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("version 2"));
}

TEST_F(PackedImagesTest, WhatIsNoFileIsRefused) {
  EXPECT_TRUE(absl::IsNotFound(PackedImages::Open(dir_ + "/missing.gpk").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PackedImages::Open(dir_).status()));
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(absl::IsInvalidArgument(PackedImages::Open(fifo).status()));  // without waiting for a writer
}

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

// tests/fuzz/make_corpus.py writes packed sets from the layout documented in
// packed_images_format.h, in Python, independently of the C++ writer: the reader must
// take them, and refuse the ones made wrong on purpose. (Each seed starts with the fuzz
// target's mode byte, taken off here.)
absl::StatusOr<std::unique_ptr<PackedImages>> OpenSeed(const std::string& name) {
  const std::string seed = PackedFileBytes(std::string(GANTRY_SOURCE_DIR) + "/tests/fuzz/corpus/packed_images/" + name);
  const std::string path = ::testing::TempDir() + "/seed-" + name;
  WritePackedBytes(path, seed.substr(1));
  return PackedImages::Open(path);
}

TEST(PackedImagesLayout, FilesWrittenFromTheDocumentedLayoutOpen) {
  absl::StatusOr<std::unique_ptr<PackedImages>> set = OpenSeed("labelled");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ((*set)->info().count, 3);
  EXPECT_EQ((*set)->info().class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ((*set)->source(2), std::string("cat/c\xe9.png"));
  EXPECT_EQ((*set)->label(1), 1);
  EXPECT_EQ((*set)->record(1)[1], (1 * 7 + 1 * 31) & 0xFF);
  absl::StatusOr<std::unique_ptr<PackedImages>> keep = OpenSeed("keep-alpha-9x9");
  ASSERT_TRUE(keep.ok()) << keep.status();
  EXPECT_EQ((*keep)->info().channels, 4);
  EXPECT_EQ((*keep)->info().alpha, "keep");
  EXPECT_THAT(std::string(OpenSeed("label-out-of-range").status().message()), HasSubstr("label 2"));
  EXPECT_THAT(std::string(OpenSeed("keep-with-3-channels").status().message()),
              HasSubstr("3 channels do not go with alpha keep"));
}

}  // namespace
}  // namespace gantry
