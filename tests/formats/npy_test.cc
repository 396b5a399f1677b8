#include "worker/formats/npy.h"

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/gantry_npy_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void Spit(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }

  // A v1.0 file with `dict` as its header (padded to 64 bytes) and raw `payload`.
  std::string HandMade(std::string dict, const std::string& payload) {
    while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
    dict.push_back('\n');
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file.push_back(static_cast<char>(dict.size()));
    file.push_back(static_cast<char>(dict.size() >> 8));
    return file + dict + payload;
  }

  std::string dir_;
};

TEST_F(NpyTest, RoundTripsShapesAndValues) {
  const std::vector<float> values = {0.5f, -1.25f, 3.0f, 1e-30f, -0.0f, 7.0f};
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{6}, {2, 3}, {1, 2, 3, 1}}) {
    ASSERT_TRUE(WriteNpy(Path("a.npy"), values.data(), shape).ok());
    absl::StatusOr<NpyArray> back = ReadNpy(Path("a.npy"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->shape, shape);
    EXPECT_EQ(0, std::memcmp(back->data.data(), values.data(), values.size() * sizeof(float)));
  }
  const float scalar = 42.0f;
  ASSERT_TRUE(WriteNpy(Path("s.npy"), &scalar, {}).ok());
  absl::StatusOr<NpyArray> back = ReadNpy(Path("s.npy"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->shape.empty());
  EXPECT_THAT(back->data, ElementsAre(42.0f));
}

TEST_F(NpyTest, HeaderIsNumpyV1PaddedTo64Bytes) {
  const std::vector<float> values(6, 1.0f);
  ASSERT_TRUE(WriteNpy(Path("a.npy"), values.data(), {2, 3}).ok());
  const std::string file = Slurp(Path("a.npy"));
  ASSERT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>(file[8]) | (static_cast<uint8_t>(file[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(file[10 + header_len - 1], '\n');
  EXPECT_EQ(file.substr(10, 60), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } ");
  EXPECT_EQ(file.size(), 10 + header_len + 6 * sizeof(float));
  EXPECT_FALSE(std::filesystem::exists(Path("a.npy.tmp")));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1) << "a temporary file was left";
}

TEST_F(NpyTest, ReadsHandWrittenFloat64) {
  const double values[3] = {1.5, -2.25, 1e300};
  std::string payload(reinterpret_cast<const char*>(values), sizeof(values));
  Spit(Path("d.npy"), HandMade("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", payload));
  absl::StatusOr<NpyArray> array = ReadNpy(Path("d.npy"));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_THAT(array->shape, ElementsAre(3));
  EXPECT_EQ(array->data[0], 1.5f);
  EXPECT_EQ(array->data[1], -2.25f);
  EXPECT_TRUE(std::isinf(array->data[2]));
}

TEST_F(NpyTest, ClearErrors) {
  Spit(Path("bad.npy"), "PK\x03\x04 this is a zip");
  EXPECT_THAT(std::string(ReadNpy(Path("bad.npy")).status().message()),
              HasSubstr(Path("bad.npy") + ": not a .npy file (it does not start with \\x93NUMPY)"));

  Spit(Path("i.npy"), HandMade("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "abcd"));
  EXPECT_THAT(std::string(ReadNpy(Path("i.npy")).status().message()), HasSubstr("unsupported dtype '<i4'"));

  Spit(Path("f.npy"), HandMade("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd"));
  EXPECT_THAT(std::string(ReadNpy(Path("f.npy")).status().message()),
              HasSubstr("fortran_order arrays are not supported"));

  Spit(Path("t.npy"), HandMade("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", "abcd"));
  EXPECT_THAT(std::string(ReadNpy(Path("t.npy")).status().message()),
              HasSubstr("truncated: shape (2, 2) of <f4 needs 16 data bytes but 4 follow"));

  Spit(Path("m.npy"), HandMade("{'descr': '<f4', 'shape': (2, 2), }", ""));
  EXPECT_THAT(std::string(ReadNpy(Path("m.npy")).status().message()), HasSubstr("malformed .npy header"));

  EXPECT_THAT(std::string(ReadNpy(Path("none.npy")).status().message()),
              HasSubstr("cannot open: No such file or directory"));

  const float x = 1.0f;
  EXPECT_THAT(std::string(WriteNpy(Path("neg.npy"), &x, {-1}).message()), HasSubstr("bad shape (-1)"));
  EXPECT_THAT(std::string(WriteNpy(dir_ + "/no/such/dir/x.npy", &x, {1}).message()),
              HasSubstr("cannot create"));
}

// A malformed header is quoted only near the fault, escaped: a 60 KB header of junk (or of
// control bytes) does not become a 60 KB message.
TEST_F(NpyTest, AHeaderErrorQuotesABoundedExcerpt) {
  std::string junk = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': ";
  junk += std::string(60000, 'A');
  junk += "\x1b[2J";
  // Version 2.0: a 4-byte header length.
  std::string file = std::string("\x93NUMPY\x02\x00", 8);
  const uint32_t n = static_cast<uint32_t>(junk.size());
  for (int i = 0; i < 4; ++i) file.push_back(static_cast<char>(n >> (8 * i)));
  Spit(Path("junk.npy"), file + junk);
  const std::string message(ReadNpy(Path("junk.npy")).status().message());
  EXPECT_THAT(message, HasSubstr("malformed .npy header"));
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  // One more: a short malformed header is quoted near the fault too.
  Spit(Path("m.npy"), HandMade("{'descr': '<f4', 'shape': (2, 2), }", ""));
  EXPECT_THAT(std::string(ReadNpy(Path("m.npy")).status().message()), HasSubstr(", near \""));
}

TEST_F(NpyTest, AFileLargerThanTheCallersLimitIsRefusedBeforeReading) {
  const float x[4] = {1, 2, 3, 4};
  ASSERT_TRUE(WriteNpy(Path("four.npy"), x, {4}).ok());
  EXPECT_THAT(std::string(ReadNpy(Path("four.npy"), 64).status().message()), HasSubstr("more than the 64"));
  EXPECT_TRUE(ReadNpy(Path("four.npy"), 1 << 20).ok());
}

}  // namespace
}  // namespace gantry
