#include "worker/formats/safetensors.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

StFile TwoTensors() {
  StFile f;
  f.metadata = {{"model", "dcgan"}, {"network", "generator"}};
  f.tensors.push_back({"fc.weight", StDtype::kF32, {2, 3}, Floats({1, -2, 3.5f, 0, 1e-30f, -0.0f})});
  f.tensors.push_back({"bn0.num_batches_tracked", StDtype::kI64, {}, std::string("\x07\0\0\0\0\0\0\0", 8)});
  f.tensors.push_back({"bn0.weight", StDtype::kBf16, {2}, std::string("\x80\x3f\x00\x40", 4)});
  return f;
}

// Bytes of a file whose header is `json` (padded to 8) followed by `buffer`.
std::string HandMade(std::string json, const std::string& buffer) {
  while (json.size() % 8 != 0) json.push_back(' ');
  const uint64_t n = json.size();
  return std::string(reinterpret_cast<const char*>(&n), 8) + json + buffer;
}

absl::StatusOr<StFile> Decode(const std::string& bytes) {
  return DecodeSafetensors({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "w.safetensors");
}

TEST(Safetensors, EncodedFilesDecodeToTheSameTensorsAndMetadata) {
  const absl::StatusOr<std::string> bytes = EncodeSafetensors(TwoTensors());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  uint64_t n = 0;
  std::memcpy(&n, bytes->data(), 8);
  EXPECT_EQ(n % 8, 0u) << "the buffer starts 8-byte aligned";
  EXPECT_EQ((*bytes)[8], '{');
  const absl::StatusOr<StFile> back = Decode(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->metadata, TwoTensors().metadata);
  ASSERT_EQ(back->tensors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->tensors[i].name, TwoTensors().tensors[i].name);
    EXPECT_EQ(back->tensors[i].dtype, TwoTensors().tensors[i].dtype);
    EXPECT_EQ(back->tensors[i].shape, TwoTensors().tensors[i].shape);
    EXPECT_EQ(back->tensors[i].bytes, TwoTensors().tensors[i].bytes);
  }
}

TEST(Safetensors, AFileWrittenByHandInTheSpecsLayoutIsRead) {
  // As the safetensors library writes one: offsets in any key order, an F16 tensor, an
  // empty one, no metadata.
  const std::string json =
      R"({"b":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"a":{"dtype":"F32","shape":[2],)"
      R"("data_offsets":[0,8]},"e":{"dtype":"F64","shape":[0,3],"data_offsets":[12,12]}})";
  const absl::StatusOr<StFile> f = Decode(HandMade(json, Floats({1, 2}) + std::string("\x00\x3c\x00\xc0", 4)));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->tensors.size(), 3u);
  EXPECT_EQ(f->tensors[0].name, "a");  // in buffer order
  EXPECT_EQ(f->tensors[1].dtype, StDtype::kF16);
  EXPECT_EQ(f->tensors[2].shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(f->metadata.empty());
}

TEST(Safetensors, MalformedFilesAreRefusedSayingWhatIsWrong) {
  const std::string good = *EncodeSafetensors(TwoTensors());
  struct Case {
    std::string bytes, says;
  };
  const std::string a = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::vector<Case> cases = {
      {"", "fewer than the 8"},
      {good.substr(0, 5), "fewer than the 8"},
      {good.substr(0, good.size() - 3), "truncated"},
      {good + "xyz", "trailing"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "above the 100 MB bound"},
      {std::string("\x40\0\0\0\0\0\0\0", 8) + "{}", "runs past the end"},
      {HandMade("[1, 2]", ""), "not a JSON object"},
      {HandMade("{\"a\": ", ""), "not a JSON object"},
      {HandMade(a + "}", Floats({1})), "the file is truncated"},
      {HandMade(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", Floats({1})),
       "do not hold a F32 tensor of shape [2]"},
      {HandMade(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", "ab"), "dtype \"U8\""},
      {HandMade(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", Floats({1, 2})), "\"shape\""},
      {HandMade(R"({"a":{"dtype":"F32","shape":[2]}})", Floats({1, 2})), "lacks"},
      {HandMade(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", Floats({1, 2, 3})), "a hole"},
      {HandMade(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],)"
                R"("data_offsets":[4,8]}})",
                Floats({1, 2})),
       "overlap"},
      {HandMade(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", Floats({1, 2})),
       "do not hold"},
      {HandMade(a + R"(,"__metadata__":{"k":1}})", Floats({1, 2})), "'k' is not a string"},
  };
  for (const Case& c : cases) {
    const absl::StatusOr<StFile> f = Decode(c.bytes);
    EXPECT_TRUE(absl::IsInvalidArgument(f.status())) << c.says;
    EXPECT_THAT(std::string(f.status().message()), AllOf(HasSubstr("w.safetensors"), HasSubstr(c.says)));
  }
}

TEST(Safetensors, TheEncoderRefusesTensorsItCouldNotWriteFaithfully) {
  StFile twice = TwoTensors();
  twice.tensors.push_back(twice.tensors[0]);
  EXPECT_THAT(EncodeSafetensors(twice).status().message(), HasSubstr("used twice"));
  StFile short_bytes = TwoTensors();
  short_bytes.tensors[0].bytes.pop_back();
  EXPECT_THAT(EncodeSafetensors(short_bytes).status().message(), HasSubstr("bytes for shape [2, 3]"));
  StFile reserved = TwoTensors();
  reserved.tensors[0].name = "__metadata__";
  EXPECT_FALSE(EncodeSafetensors(reserved).ok());
}

TEST(Safetensors, ReadingAMissingFileNamesIt) {
  const absl::Status s = ReadSafetensors("/no/such/w.safetensors").status();
  EXPECT_THAT(s.message(), HasSubstr("/no/such/w.safetensors"));
}

}  // namespace
}  // namespace gantry
