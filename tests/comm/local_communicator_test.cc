#include "worker/comm/local_communicator.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kDcganGradients = 2'518'337;

// Values spread over many binades, so that summing in a different order changes bits.
std::vector<float> RankInput(int rank, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  Rng rng(1000 + rank);
  for (float& x : v)
    x = static_cast<float>((rng.Uniform() - 0.5) * std::ldexp(1.0, static_cast<int>(rng.Below(40)) - 20));
  return v;
}

std::vector<float> RankOrderSum(int size, int64_t count) {
  std::vector<float> sum = RankInput(0, count);
  for (int r = 1; r < size; ++r) {
    const std::vector<float> in = RankInput(r, count);
    for (int64_t i = 0; i < count; ++i) sum[i] += in[i];
  }
  return sum;
}

bool SameBytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class LocalCommunicatorTest : public ::testing::TestWithParam<int> {};

TEST_P(LocalCommunicatorTest, AllReduceSumsInRankOrderBitIdenticallyOnEveryRank) {
  const int size = GetParam();
  for (const int64_t count : {int64_t{1}, int64_t{1000}, kDcganGradients}) {
    const std::vector<float> expected = RankOrderSum(size, count);
    auto each_rank = [&](Communicator& comm) -> absl::Status {
      std::vector<float> data = RankInput(comm.rank(), count);
      if (absl::Status s = comm.AllReduceSum(data.data(), count, {}); !s.ok()) return s;
      if (SameBytes(data, expected)) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("rank ", comm.rank(), ": sum differs from the rank-order sum"));
    };
    const absl::Status s = RunRanks(size, each_rank);
    EXPECT_TRUE(s.ok()) << "count " << count << ": " << s;
  }
}

TEST_P(LocalCommunicatorTest, BroadcastCopiesTheRootsBytesFromEveryRoot) {
  const int size = GetParam();
  for (int root = 0; root < size; ++root) {
    auto each_rank = [&](Communicator& comm) -> absl::Status {
      std::vector<int32_t> data(37, comm.rank() == root ? 1000 + root : -comm.rank());
      if (absl::Status s = comm.Broadcast(data.data(), 37 * 4, root, {}); !s.ok()) return s;
      for (int32_t x : data) {
        if (x != 1000 + root) return absl::InternalError(absl::StrCat("rank ", comm.rank(), " got ", x));
      }
      return absl::OkStatus();
    };
    const absl::Status s = RunRanks(size, each_rank);
    EXPECT_TRUE(s.ok()) << "root " << root << ": " << s;
  }
}

TEST_P(LocalCommunicatorTest, GatherCollectsEveryRankInRankOrderOnTheRoot) {
  const int size = GetParam();
  const int root = size - 1;
  std::vector<int64_t> gathered(2 * size, -1);
  auto each_rank = [&](Communicator& comm) -> absl::Status {
    const int64_t mine[2] = {comm.rank(), 100 * comm.rank()};
    return comm.Gather(mine, sizeof(mine), comm.rank() == root ? gathered.data() : nullptr, root, {});
  };
  const absl::Status s = RunRanks(size, each_rank);
  ASSERT_TRUE(s.ok()) << s;
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(gathered[2 * r], r);
    EXPECT_EQ(gathered[2 * r + 1], 100 * r);
  }
}

TEST_P(LocalCommunicatorTest, BarrierHoldsEveryRankUntilTheLastArrives) {
  const int size = GetParam();
  std::atomic<bool> last_arrived{false};
  std::atomic<int> others_arriving{0};
  auto each_rank = [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == size - 1) {
      // Late for sure: every other rank is at the barrier's door first (on a loaded
      // machine a fixed sleep alone could end before they got there, and prove nothing).
      while (others_arriving.load() < size - 1) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      last_arrived = true;
    } else {
      ++others_arriving;
    }
    if (absl::Status s = comm.Barrier({}); !s.ok()) return s;
    if (last_arrived) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("rank ", comm.rank(), " passed the barrier too early"));
  };
  const absl::Status s = RunRanks(size, each_rank);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_P(LocalCommunicatorTest, RankThatNeverArrivesIsNamedByEveryOtherRankWithinTheTimeout) {
  const int size = GetParam();
  const int absent = size - 1;
  std::vector<absl::Status> errors(size);
  std::vector<double> seconds(size, 0);
  (void)RunRanks(size, [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == absent) return absl::OkStatus();
    std::vector<float> data(kDcganGradients, 1.0f);
    const auto start = std::chrono::steady_clock::now();
    const absl::Status s = comm.AllReduceSum(data.data(), kDcganGradients, CommOptions{0.3});
    errors[comm.rank()] = s;
    seconds[comm.rank()] = SecondsSince(start);
    return s;
  });
  for (int r = 0; r < size; ++r) {
    if (r == absent) continue;
    SCOPED_TRACE(absl::StrCat("rank ", r));
    EXPECT_EQ(errors[r].code(), absl::StatusCode::kDeadlineExceeded) << errors[r];
    EXPECT_EQ(errors[r].message(),
              absl::StrCat("rank ", r, ": all-reduce #1 of 2518337 floats timed out after 0.3 s; rank ",
                           absent, " did not arrive (dead or stuck?)"));
    EXPECT_GE(seconds[r], 0.3);
    // Bounded, not hung; the margin holds on a loaded 2-core machine and under TSan.
    EXPECT_LT(seconds[r], 15.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, LocalCommunicatorTest, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat(info.param, "ranks");
                         });

TEST(LocalCommunicator, NamesEveryMissingRankAndNumbersCollectivesOfAllKinds) {
  absl::Status rank0;
  (void)RunRanks(4, [&](Communicator& comm) -> absl::Status {
    // Only the gather, which two ranks skip, may time out: the collectives all ranks
    // reach get a wait no thread start-up delay on a loaded machine can exceed.
    const CommOptions generous{60};
    if (absl::Status s = comm.Barrier(generous); !s.ok()) return s;
    int32_t word = 7;
    if (absl::Status s = comm.Broadcast(&word, 4, 0, generous); !s.ok()) return s;
    if (comm.rank() == 1 || comm.rank() == 3) return absl::OkStatus();
    std::vector<int32_t> all(4);
    absl::Status s = comm.Gather(&word, 4, all.data(), 0, CommOptions{0.3});
    if (comm.rank() == 0) rank0 = s;
    return s;
  });
  EXPECT_EQ(
      rank0.message(),
      "rank 0: gather #3 of 4 bytes per rank to rank 0 timed out after 0.3 s; ranks 1, 3 did not arrive "
      "(dead or stuck?)");
}

TEST(LocalCommunicator, ALateRankFindsTheGroupBrokenInsteadOfHanging) {
  absl::Status late;
  absl::Notification rank0_timed_out;  // an event, not a sleep: rank 1 is late by construction
  const absl::Status first = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 1) {
      EXPECT_TRUE(rank0_timed_out.WaitForNotificationWithTimeout(absl::Seconds(60)));
      late = comm.Barrier(CommOptions{30});
      return absl::OkStatus();
    }
    absl::Status s = comm.Barrier(CommOptions{0.1});
    rank0_timed_out.Notify();
    return s;
  });
  EXPECT_EQ(first.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(late.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(late.message(),
              HasSubstr("rank 1: barrier #1 refused: the group failed earlier: rank 0: barrier #1"));
}

TEST(LocalCommunicator, MismatchedCollectivesFailBothRanksNamingBothCalls) {
  std::vector<absl::Status> errors(2);
  (void)RunRanks(2, [&](Communicator& comm) -> absl::Status {
    float x = 1;
    errors[comm.rank()] = comm.rank() == 0 ? comm.AllReduceSum(&x, 1, CommOptions{60})
                                           : comm.Broadcast(&x, 4, 0, CommOptions{60});
    return errors[comm.rank()];
  });
  for (const absl::Status& s : errors) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("called broadcast #1 of 4 bytes from rank 0"));
    EXPECT_THAT(s.message(), HasSubstr("called all-reduce #1 of 1 floats"));
  }
}

TEST(LocalCommunicator, RejectsBadArgumentsWithoutTakingACollectiveNumber) {
  LocalGroup group(1);
  std::unique_ptr<Communicator> comm = group.Rank(0);
  float x = 1;
  EXPECT_EQ(comm->AllReduceSum(&x, -1, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(comm->AllReduceSum(nullptr, 3, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(comm->Broadcast(&x, 4, 1, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(comm->Gather(&x, 4, nullptr, 0, {}).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status zero = comm->Barrier(CommOptions{0});
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(),
              HasSubstr("rank 0: barrier #1: timeout_seconds is 0; it must be positive and finite"));
  EXPECT_EQ(comm->Barrier(CommOptions{std::numeric_limits<double>::infinity()}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(comm->AllReduceSum(&x, 1, {}).ok());
  EXPECT_EQ(x, 1.0f);
  EXPECT_EQ(comm->backend_name(), "local");
  EXPECT_TRUE(comm->ranks_share_a_process());
}

TEST(RunRanks, ReturnsTheLowestFailingRanksError) {
  const absl::Status s = RunRanks(3, [](Communicator& comm) -> absl::Status {
    if (comm.rank() == 0) return absl::OkStatus();
    return absl::NotFoundError(absl::StrCat("rank ", comm.rank()));
  });
  EXPECT_EQ(s, absl::NotFoundError("rank 1"));
}

}  // namespace
}  // namespace gantry
