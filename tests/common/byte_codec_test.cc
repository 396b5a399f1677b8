#include "common/byte_codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(ByteCodec, RoundTripsEveryKindInOrder) {
  ByteWriter w;
  w.U32(0xdeadbeef);
  w.U64(std::numeric_limits<uint64_t>::max());
  w.I64(-42);
  w.F32(-0.0f);
  w.F64(std::numeric_limits<double>::quiet_NaN());
  w.String("ckpt\n");
  const std::vector<float> floats{1.5f, std::numeric_limits<float>::denorm_min(), -3.0f};
  w.Floats(floats);
  w.Doubles(std::vector<double>{});
  w.I64s(std::vector<int64_t>{7, -7});
  const std::vector<uint8_t> bytes = w.Take();

  ByteReader r(bytes, "test record");
  EXPECT_EQ(r.U32("a"), 0xdeadbeefu);
  EXPECT_EQ(r.U64("b"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.I64("c"), -42);
  const float neg_zero = r.F32("d");
  EXPECT_TRUE(std::signbit(neg_zero) && neg_zero == 0.0f);
  EXPECT_TRUE(std::isnan(r.F64("e")));
  EXPECT_EQ(r.String("f"), "ckpt\n");
  const std::vector<float> back = r.Floats("g");
  ASSERT_EQ(back.size(), floats.size());
  EXPECT_EQ(std::memcmp(back.data(), floats.data(), sizeof(float) * floats.size()), 0);
  EXPECT_TRUE(r.Doubles("h").empty());
  EXPECT_EQ(r.I64s("i"), (std::vector<int64_t>{7, -7}));
  EXPECT_TRUE(r.Finish().ok()) << r.Finish();
}

TEST(ByteCodec, RunningOutNamesTheFieldAndSticks) {
  ByteWriter w;
  w.U32(1);
  const std::vector<uint8_t> bytes = w.Take();
  ByteReader r(bytes, "pos section");
  EXPECT_EQ(r.U32("epoch"), 1u);
  EXPECT_EQ(r.I64("step"), 0);
  EXPECT_EQ(r.U32("later"), 0u);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("pos section: ends early, reading step (8 bytes wanted, 0 left)"));
}

TEST(ByteCodec, AnImpossibleCountFailsBeforeAllocating) {
  ByteWriter w;
  w.U64(uint64_t{1} << 60);  // a count no file could back
  w.F32(1.0f);
  const std::vector<uint8_t> bytes = w.Take();
  ByteReader r(bytes, "model");
  EXPECT_TRUE(r.Floats("params").empty());
  EXPECT_THAT(r.status().message(), HasSubstr("model: params claims 1152921504606846976 elements of 4 bytes"));
}

TEST(ByteCodec, FinishRejectsLeftoverBytes) {
  ByteWriter w;
  w.U32(1);
  w.U32(2);
  const std::vector<uint8_t> bytes = w.Take();
  ByteReader r(bytes, "scalers");
  r.U32("one");
  EXPECT_THAT(r.Finish().message(), HasSubstr("scalers: 4 unexpected bytes after the last field"));
}

}  // namespace
}  // namespace gantry
