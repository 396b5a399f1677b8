// CollectiveThread: all-reduces queued from one thread run in order on another, over a
// Duplicate of the ranks' communicator; a failure ends the wait within the timeout and
// stays. In comm_tests, so the sanitizer stage runs it under TSan.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/comm/collective_thread.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

TEST(CollectiveThread, RunsQueuedAllReducesInOrderAndSumsThem) {
  LocalGroup group(2);
  std::vector<std::vector<float>> buffers = {{1, 2, 3}, {10, 20, 30}};
  std::vector<std::vector<float>> second = {{5}, {7}};
  std::vector<absl::Status> status(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r, comm = group.Rank(r)]() mutable {
      absl::StatusOr<std::unique_ptr<Communicator>> duplicate = comm->Duplicate({5.0});
      if (!duplicate.ok()) {
        status[r] = duplicate.status();
        return;
      }
      CollectiveThread thread(*std::move(duplicate), {5.0});
      thread.AllReduceSum(buffers[r].data(), 3);
      thread.AllReduceSum(second[r].data(), 1);
      status[r] = thread.Wait();
      EXPECT_GE(thread.TakeBusySeconds(), 0.0);
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(status[r].ok()) << status[r];
    EXPECT_EQ(buffers[r], (std::vector<float>{11, 22, 33}));
    EXPECT_EQ(second[r], (std::vector<float>{12}));
  }
}

TEST(CollectiveThread, APeerThatNeverArrivesEndsTheWaitWithItsTimeout) {
  LocalGroup group(2);
  std::unique_ptr<Communicator> rank0 = group.Rank(0);
  absl::StatusOr<std::unique_ptr<Communicator>> duplicate = rank0->Duplicate({0.2});
  ASSERT_TRUE(duplicate.ok());
  CollectiveThread thread(*std::move(duplicate), {0.2});
  float x = 1;
  thread.AllReduceSum(&x, 1);
  thread.AllReduceSum(&x, 1);  // skipped after the first failed
  const absl::Status status = thread.Wait();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("rank 1 did not arrive"), std::string::npos) << status;
  EXPECT_EQ(thread.Wait(), status) << "a failure stays";
}

}  // namespace
}  // namespace gantry
