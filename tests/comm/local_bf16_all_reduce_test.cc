// LocalGroup's bf16 all-reduce: rank-order pair sums (fp32 add, one rounding each),
// bit-identical on every rank, numbered and checked like the fp32 all-reduce.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/comm/local_communicator.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

// Gradient-like values over many binades, already on the wire.
std::vector<uint16_t> Bf16RankInput(int rank, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  Rng rng(500 + rank);
  for (float& x : v) {
    x = static_cast<float>((rng.Uniform() - 0.5) * std::ldexp(1.0, static_cast<int>(rng.Below(30)) - 20));
  }
  std::vector<uint16_t> wire(v.size());
  ToWireBf16(v.data(), wire.data(), count);
  return wire;
}

class LocalBf16AllReduceTest : public ::testing::TestWithParam<int> {};

TEST_P(LocalBf16AllReduceTest, SumsPairByPairInRankOrderIdenticallyOnEveryRank) {
  const int size = GetParam();
  for (const int64_t count : {int64_t{1}, int64_t{17}, int64_t{100003}}) {
    std::vector<uint16_t> expected = Bf16RankInput(0, count);
    for (int r = 1; r < size; ++r) {
      const std::vector<uint16_t> in = Bf16RankInput(r, count);
      for (int64_t i = 0; i < count; ++i) {
        expected[i] = WireBf16(Bf16ToFloat(in[i]) + Bf16ToFloat(expected[i]));
      }
    }
    const absl::Status s = RunRanks(size, [&](Communicator& comm) -> absl::Status {
      std::vector<uint16_t> data = Bf16RankInput(comm.rank(), count);
      if (absl::Status st = comm.AllReduceSumBf16(data.data(), count, {}); !st.ok()) return st;
      if (std::memcmp(data.data(), expected.data(), data.size() * 2) == 0) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("rank ", comm.rank(), ": bf16 sum differs from the rank-order sum"));
    });
    EXPECT_TRUE(s.ok()) << "count " << count << ": " << s;
  }
}

TEST_P(LocalBf16AllReduceTest, ExactWhereBf16CanHoldTheSum) {
  const int size = GetParam();
  const absl::Status s = RunRanks(size, [&](Communicator& comm) -> absl::Status {
    // Small integers: every partial sum is exact in bf16 (8 significant bits).
    std::vector<uint16_t> data(64);
    for (size_t i = 0; i < data.size(); ++i) data[i] = WireBf16(static_cast<float>(i + comm.rank()));
    if (absl::Status st = comm.AllReduceSumBf16(data.data(), 64, {}); !st.ok()) return st;
    for (size_t i = 0; i < data.size(); ++i) {
      const float want = static_cast<float>(size * i + size * (size - 1) / 2);
      if (Bf16ToFloat(data[i]) != want) {
        return absl::InternalError(absl::StrCat("sum[", i, "] = ", Bf16ToFloat(data[i]), ", want ", want));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

INSTANTIATE_TEST_SUITE_P(Ranks, LocalBf16AllReduceTest, ::testing::Values(2, 3),
                         [](const ::testing::TestParamInfo<int>& info) { return absl::StrCat(info.param, "ranks"); });

TEST(LocalBf16AllReduce, AnInfinityOnOneRankReachesEveryRank) {
  std::vector<std::vector<uint16_t>> results(2);
  const absl::Status s = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    std::vector<uint16_t> data = Bf16RankInput(comm.rank(), 40);
    if (comm.rank() == 1) data[5] = WireBf16(std::numeric_limits<float>::infinity());
    absl::Status st = comm.AllReduceSumBf16(data.data(), 40, {});
    results[comm.rank()] = data;
    return st;
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0][5], 0x7f80);
}

TEST(LocalBf16AllReduce, MismatchWithAnFp32AllReduceNamesBothAndTimeoutNamesTheRank) {
  std::vector<absl::Status> errors(2);
  (void)RunRanks(2, [&](Communicator& comm) -> absl::Status {
    float x = 1;
    uint16_t y = 0x3f80;
    errors[comm.rank()] =
        comm.rank() == 0 ? comm.AllReduceSum(&x, 1, CommOptions{60}) : comm.AllReduceSumBf16(&y, 1, CommOptions{60});
    return errors[comm.rank()];
  });
  for (const absl::Status& s : errors) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("all-reduce #1 of 1 bf16 values"));
    EXPECT_THAT(s.message(), HasSubstr("all-reduce #1 of 1 floats"));
  }
  absl::Status timeout;
  (void)RunRanks(2, [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 1) return absl::OkStatus();
    std::vector<uint16_t> data(1000);
    timeout = comm.AllReduceSumBf16(data.data(), 1000, CommOptions{0.2});
    return timeout;
  });
  EXPECT_EQ(timeout.message(),
            "rank 0: all-reduce #1 of 1000 bf16 values timed out after 0.2 s; rank 1 did not arrive (dead or stuck?)");
  LocalGroup group(1);
  EXPECT_EQ(group.Rank(0)->AllReduceSumBf16(nullptr, 3, {}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gantry
