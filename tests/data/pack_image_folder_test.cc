// PackImageFolder and ImageFolderKey (worker/data/pack_image_folder.h) on folders made
// here: every kind of image packed (by content, not name) with the right pixels, labels
// from the class folders, every reason to skip a file, the refusals (no image, --strict,
// an existing --out), links and loops, odd names, stopping, and the key.
#include "worker/data/pack_image_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/images/test_images.h"
#include "worker/data/packed_images.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using namespace test_images;

std::string PackedOutputBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class PackImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/pack_image_folder_test";
    std::filesystem::remove_all(root_);
    from_ = root_ + "/images";
    std::filesystem::create_directories(from_);
  }

  void Put(const std::string& relative, const std::string& bytes) {
    const std::string path = from_ + "/" + relative;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteFile(path, bytes);
  }

  PackRequest Request(int64_t size = 16) {
    PackRequest r;
    r.from = from_;
    r.out = root_ + "/out.gpk";
    r.image_size = size;
    return r;
  }

  std::unique_ptr<PackedImages> Open(const std::string& path) {
    auto set = PackedImages::Open(path);
    EXPECT_TRUE(set.ok()) << set.status();
    return set.ok() ? *std::move(set) : nullptr;
  }

  // The reasons of the skipped files by their paths.
  static std::map<std::string, std::string> SkippedReasons(const PackReport& report) {
    std::map<std::string, std::string> reasons;
    for (const auto& [file, reason] : report.skipped) reasons[file] = reason.substr(0, reason.find(':'));
    return reasons;
  }

  // Files left in a folder, other than those named.
  static std::vector<std::string> FolderListing(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string root_, from_;
};

TEST_F(PackImageFolderTest, PacksEveryKindOfImageWithLabelsFromTheFolders) {
  // Class "a": every PNG kind; "b": every JPEG kind, a WebP, and a JPEG named .png.
  Put("a/gray.png", Png({.width = 16, .height = 16, .kind = PngKind::kGray}, Pattern(16, 16, 1, 8)));
  Put("a/gray16.png",
      Png({.width = 16, .height = 16, .kind = PngKind::kGray, .bit_depth = 16}, Pattern(16, 16, 1, 16)));
  Put("a/gray_alpha.png", Png({.width = 16, .height = 16, .kind = PngKind::kGrayAlpha}, Pattern(16, 16, 2, 8)));
  Put("a/rgb16.png", Png({.width = 16, .height = 16, .kind = PngKind::kRgb, .bit_depth = 16}, Pattern(16, 16, 3, 16)));
  Put("a/rgba.png", Png({.width = 16, .height = 16, .kind = PngKind::kRgba}, Pattern(16, 16, 4, 8)));
  Put("a/interlaced.png", Png({.width = 16, .height = 16, .interlaced = true}, Pattern(16, 16, 3, 8)));
  std::vector<uint16_t> indices(256);
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i % 3;
  Put("a/palette.png", Png({.width = 16,
                            .height = 16,
                            .kind = PngKind::kPalette,
                            .palette = {1, 2, 3, 4, 5, 6, 7, 8, 9},
                            .palette_alpha = {0, 255}},
                           indices));
  Put("b/baseline.jpg", Jpeg({.width = 32, .height = 24}, Pattern8(32, 24, 3)));
  Put("b/progressive.jpg", Jpeg({.width = 24, .height = 32, .progressive = true}, Pattern8(24, 32, 3)));
  Put("b/gray.jpg", Jpeg({.width = 16, .height = 16, .components = 1}, Pattern8(16, 16, 1)));
  Put("b/cmyk.jpg", Jpeg({.width = 16, .height = 16, .components = 4}, Pattern8(16, 16, 4)));
  Put("b/jpeg-named.png", Jpeg({.width = 20, .height = 20}, Pattern8(20, 20, 3)));
  Put("b/lossy.webp", Webp(20, 30, 3, Pattern8(20, 30, 3), false));

  absl::StatusOr<PackReport> report = PackImageFolder(Request());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->packed, 13);
  EXPECT_TRUE(report->skipped.empty()) << report->skipped.front().first << ": " << report->skipped.front().second;
  EXPECT_EQ(report->files_seen, 13);
  std::unique_ptr<PackedImages> set = Open(root_ + "/out.gpk");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->info().class_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(set->info().channels, 3);
  // Byte-wise order within each folder.
  const std::vector<std::string> expected = {"a/gray.png",       "a/gray16.png", "a/gray_alpha.png", "a/interlaced.png",
                                             "a/palette.png",    "a/rgb16.png",  "a/rgba.png",       "b/baseline.jpg",
                                             "b/cmyk.jpg",       "b/gray.jpg",   "b/jpeg-named.png", "b/lossy.webp",
                                             "b/progressive.jpg"};
  ASSERT_EQ(set->info().count, static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(set->source(static_cast<int64_t>(i)), expected[i]);
    EXPECT_EQ(set->label(static_cast<int64_t>(i)), expected[i][0] == 'a' ? 0 : 1) << expected[i];
  }
  // The interlaced RGB PNG is already 16x16: its record is its pixels, planar.
  const std::vector<uint16_t> pixels = Pattern(16, 16, 3, 8);
  const uint8_t* record = set->record(3);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 256; ++i) ASSERT_EQ(record[c * 256 + i], pixels[static_cast<size_t>(i) * 3 + c]);
  }
  // The palette's entry 0 is transparent: white over the default background.
  EXPECT_EQ(set->record(4)[0], 255);
  EXPECT_EQ(set->record(4)[1], 4);  // entry 1, opaque: red 4
}

TEST_F(PackImageFolderTest, SkipsWhatItCannotPackAndSaysWhy) {
  const std::string png = Png({.width = 32, .height = 32, .kind = PngKind::kRgb}, Pattern(32, 32, 3, 8));
  Put("c/good.png", png);
  Put("c/notes.txt", "hello");
  Put("c/empty.png", "");
  Put("c/cut.png", png.substr(0, png.size() / 2));
  std::string corrupt = png;
  corrupt[corrupt.size() / 2] ^= 0x40;
  Put("c/corrupt.png", corrupt);
  Put("c/tiny.png", Png({.width = 7, .height = 30}, Pattern(7, 30, 3, 8)));
  Put("c/bomb.png", HugePngHeader(100000, 100000));
  Put("c/anim.gif", std::string("GIF89a\x10\x00\x10\x00\x00\x00\x00", 13));
  ASSERT_EQ(::mkfifo((from_ + "/c/fifo.png").c_str(), 0600), 0);
  std::filesystem::create_directory_symlink(from_ + "/c", from_ + "/c/loop");
  std::filesystem::create_symlink(from_ + "/c/nowhere.png", from_ + "/c/dangling.png");
  Put("top.png", png);

  absl::StatusOr<PackReport> report = PackImageFolder(Request());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->packed, 1);
  EXPECT_EQ(SkippedReasons(*report), (std::map<std::string, std::string>{{"c/anim.gif", kSkipUnsupported},
                                                                         {"c/bomb.png", kSkipBomb},
                                                                         {"c/corrupt.png", kSkipCorrupt},
                                                                         {"c/cut.png", kSkipTruncated},
                                                                         {"c/dangling.png", kSkipUnreadable},
                                                                         {"c/empty.png", kSkipNotAnImage},
                                                                         {"c/fifo.png", kSkipNotAFile},
                                                                         {"c/loop", kSkipLinkLoop},
                                                                         {"c/notes.txt", kSkipNotAnImage},
                                                                         {"c/tiny.png", kSkipTooSmall},
                                                                         {"top.png", kSkipNoClass}}));
  EXPECT_EQ(report->skipped_by_reason.at(kSkipNotAnImage), 2);
  EXPECT_EQ(report->skipped_by_reason.at(kSkipBomb), 1);
  EXPECT_EQ(report->files_seen, 12);
  // The reason carries the decoder's detail.
  for (const auto& [file, reason] : report->skipped) {
    if (file == "c/bomb.png") {
      EXPECT_THAT(reason, HasSubstr("100000x100000"));
    }
    if (file == "c/loop") {
      EXPECT_THAT(reason, HasSubstr("contains itself"));
    }
  }
}

TEST_F(PackImageFolderTest, AFolderNamedLikeAnImageIsWalkedAndOddNamesKeptAsTheyAre) {
  const std::string png = Png({.width = 16, .height = 16}, Pattern(16, 16, 3, 8));
  Put("d/x.png/inner.png", png);
  const std::string odd = std::string("d/caf\xe9\x01.png");  // not UTF-8, and a control byte
  Put(odd, png);
  absl::StatusOr<PackReport> report = PackImageFolder(Request());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->packed, 2);
  std::unique_ptr<PackedImages> set = Open(root_ + "/out.gpk");
  EXPECT_EQ(set->source(0), odd);
  EXPECT_EQ(set->source(1), "d/x.png/inner.png");
}

TEST_F(PackImageFolderTest, ChannelsAndAlphaSettingsShapeTheRecords) {
  Put("e/rgba.png", Png({.width = 8, .height = 8, .kind = PngKind::kRgba}, Pattern(8, 8, 4, 8)));
  Put("e/gray.png", Png({.width = 8, .height = 8, .kind = PngKind::kGray}, Pattern(8, 8, 1, 8)));
  struct Case {
    int64_t channels;
    std::string alpha;
    int64_t stored;
  };
  for (const Case& c : {Case{1, "white", 1}, Case{3, "black", 3}, Case{1, "keep", 2}, Case{3, "keep", 4}}) {
    PackRequest r = Request(8);
    r.channels = c.channels;
    r.alpha = c.alpha;
    r.out = root_ + "/" + c.alpha + std::to_string(c.channels) + ".gpk";
    ASSERT_TRUE(PackImageFolder(r).ok());
    std::unique_ptr<PackedImages> set = Open(r.out);
    EXPECT_EQ(set->info().channels, c.stored);
    EXPECT_EQ(set->info().alpha, c.alpha);
    EXPECT_EQ(set->record_bytes(), c.stored * 64);
    if (c.alpha == "keep") {
      // The gray PNG is opaque: alpha 255; the RGBA one keeps its alpha samples.
      EXPECT_EQ(set->record(0)[(c.stored - 1) * 64], 255);
      EXPECT_EQ(set->record(1)[(c.stored - 1) * 64 + 5], Pattern(8, 8, 4, 8)[5 * 4 + 3]);
    }
  }
}

TEST_F(PackImageFolderTest, SmallerImagesAreScaledUpAndCounted) {
  Put("m/small.png", Png({.width = 8, .height = 12}, Pattern(8, 12, 3, 8)));
  Put("m/large.png", Png({.width = 40, .height = 40}, Pattern(40, 40, 3, 8)));
  absl::StatusOr<PackReport> report = PackImageFolder(Request(16));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->packed, 2);
  EXPECT_EQ(report->upscaled, 1);
}

TEST_F(PackImageFolderTest, LabelsNoneTakesAFlatFolderAndFoldersNeedsClassFolders) {
  Put("one.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8)));
  Put("two.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8, 1)));
  absl::StatusOr<PackReport> refused = PackImageFolder(Request(8));
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--labels none"));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/out.gpk"));
  PackRequest r = Request(8);
  r.labels = "none";
  ASSERT_TRUE(PackImageFolder(r).ok());
  std::unique_ptr<PackedImages> set = Open(r.out);
  EXPECT_TRUE(set->info().class_names.empty());
  EXPECT_EQ(set->label(1), -1);
}

TEST_F(PackImageFolderTest, AFolderWithNoImageIsRefusedByName) {
  Put("f/readme.txt", "no pictures here");
  absl::StatusOr<PackReport> refused = PackImageFolder(Request());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr(from_ + ": no image to pack"));
  std::filesystem::remove_all(from_ + "/f");
  EXPECT_TRUE(absl::IsInvalidArgument(PackImageFolder(Request()).status()));  // empty
  EXPECT_EQ(FolderListing(root_), std::vector<std::string>{"images"});
}

TEST_F(PackImageFolderTest, StrictFailsOnAnySkipAndWritesNothing) {
  Put("g/good.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8)));
  Put("g/bad.png", "not a png");
  Put("g/zgood.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8, 2)));
  PackRequest r = Request(8);
  r.strict = true;
  absl::StatusOr<PackReport> refused = PackImageFolder(r);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--strict: 1 of 3 files skipped"));
  EXPECT_EQ(FolderListing(root_), std::vector<std::string>{"images"});
  r.strict = false;
  EXPECT_EQ(PackImageFolder(r)->packed, 2);
}

TEST_F(PackImageFolderTest, AnExistingOutIsRefusedAndLeftAlone) {
  Put("h/good.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8)));
  PackRequest r = Request(8);
  std::ofstream(r.out) << "mine";
  const absl::Status refused = PackImageFolder(r).status();
  EXPECT_TRUE(absl::IsAlreadyExists(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr(r.out));
  EXPECT_EQ(PackedOutputBytes(r.out), "mine");
  std::filesystem::remove(r.out);
  std::filesystem::create_symlink(root_ + "/nowhere", r.out);  // even a dangling link
  EXPECT_TRUE(absl::IsAlreadyExists(PackImageFolder(r).status()));
}

TEST_F(PackImageFolderTest, AnOutInsideTheFolderIsNotPackedIntoItself) {
  Put("i/good.png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8)));
  PackRequest r = Request(8);
  r.out = from_ + "/i/zz-out.gpk";  // walked after good.png, while being written
  absl::StatusOr<PackReport> report = PackImageFolder(r);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->packed, 1);
  EXPECT_TRUE(report->skipped.empty());
}

TEST_F(PackImageFolderTest, BadSettingsAndFoldersAreRefusedNamingTheFlag) {
  PackRequest r = Request();
  r.image_size = 4;
  EXPECT_THAT(std::string(PackImageFolder(r).status().message()), HasSubstr("--image-size 4"));
  r = Request();
  r.fit = "zoom";
  EXPECT_THAT(std::string(PackImageFolder(r).status().message()), HasSubstr("--fit 'zoom'"));
  r = Request();
  r.labels = "files";
  EXPECT_THAT(std::string(PackImageFolder(r).status().message()), HasSubstr("--labels"));
  r = Request();
  r.from = root_ + "/missing";
  EXPECT_TRUE(absl::IsNotFound(PackImageFolder(r).status()));
  Put("file.png", "x");
  r.from = from_ + "/file.png";
  EXPECT_THAT(std::string(PackImageFolder(r).status().message()), HasSubstr("not a folder"));
}

TEST_F(PackImageFolderTest, StoppingRemovesTheTemporaryFile) {
  for (int i = 0; i < 5; ++i)
    Put("j/" + std::to_string(i) + ".png", Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8)));
  PackRequest r = Request(8);
  int polls = 0;
  r.stop_requested = [&] { return ++polls > 3; };
  const absl::Status stopped = PackImageFolder(r).status();
  EXPECT_TRUE(absl::IsCancelled(stopped)) << stopped;
  EXPECT_EQ(FolderListing(root_), std::vector<std::string>{"images"});
}

TEST_F(PackImageFolderTest, PackingIsDeterministic) {
  Put("k/a.jpg", Jpeg({.width = 40, .height = 30}, Pattern8(40, 30, 3)));
  Put("k/b.png", Png({.width = 30, .height = 50, .kind = PngKind::kRgba}, Pattern(30, 50, 4, 8)));
  PackRequest r = Request(16);
  ASSERT_TRUE(PackImageFolder(r).ok());
  r.out = root_ + "/again.gpk";
  ASSERT_TRUE(PackImageFolder(r).ok());
  EXPECT_EQ(PackedOutputBytes(root_ + "/out.gpk"), PackedOutputBytes(r.out));
}

TEST_F(PackImageFolderTest, TheKeyFollowsNamesSizesTimesAndSettingsOnly) {
  const std::string png = Png({.width = 8, .height = 8}, Pattern(8, 8, 3, 8));
  Put("l/a.png", png);
  const PackRequest r = Request(8);
  const std::string key = *ImageFolderKey(r);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(*ImageFolderKey(r), key);
  PackRequest other = r;
  other.image_size = 9;
  EXPECT_NE(*ImageFolderKey(other), key);
  other = r;
  other.fit = "pad";
  EXPECT_NE(*ImageFolderKey(other), key);

  // Other content of the same size with the same modification time is not seen (the
  // documented limit); a new time is.
  const std::string path = from_ + "/l/a.png";
  const auto mtime = std::filesystem::last_write_time(path);
  std::string changed = png;
  changed[changed.size() - 20] ^= 1;
  WriteFile(path, changed);
  std::filesystem::last_write_time(path, mtime);
  EXPECT_EQ(*ImageFolderKey(r), key);
  std::filesystem::last_write_time(path, mtime + std::chrono::seconds(1));
  const std::string touched = *ImageFolderKey(r);
  EXPECT_NE(touched, key);
  Put("l/b.png", png);
  EXPECT_NE(*ImageFolderKey(r), touched);
  EXPECT_FALSE(std::filesystem::exists(r.out));  // stat only: nothing written
}

}  // namespace
}  // namespace gantry
