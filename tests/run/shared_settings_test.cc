// ShareSettings hands rank 0's settings, or its error, to every rank.
#include "worker/run/shared_settings.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

// An error that quotes bytes of a damaged run.json (not UTF-8) reaches every rank as an
// error; it aborted gantry-worker export (nlohmann's dump threw) before.
TEST(ShareSettings, AnErrorQuotingBytesThatAreNotUtf8ReachesEveryRank) {
  const std::string quoted = "run.json: not a valid run.json: last read: '\xba\xff'";
  const absl::Status s = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    const absl::StatusOr<RawSettings> mine = absl::InvalidArgumentError(quoted);
    const absl::StatusOr<SharedSettings> shared = ShareSettings(comm, mine, CommOptions{});
    EXPECT_FALSE(shared.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(shared.status())) << shared.status();
    EXPECT_THAT(shared.status().message(), HasSubstr("run.json: not a valid run.json"));
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ShareSettings, EveryRankResolvesRankZerosSettings) {
  const absl::Status s = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    const absl::StatusOr<RawSettings> mine =
        comm.rank() == 0 ? RawSettings{{"epochs", "3"}} : RawSettings{{"epochs", "7"}};
    const absl::StatusOr<SharedSettings> shared = ShareSettings(comm, mine, CommOptions{});
    EXPECT_TRUE(shared.ok()) << shared.status();
    if (shared.ok()) EXPECT_EQ(shared->config.epochs, 3);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace gantry
