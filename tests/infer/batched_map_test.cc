#include "worker/infer/batched_map.h"

#include <mutex>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

// Item i's output is its input times 2 plus 1000 x its position in the call: equal results
// on any number of ranks prove every item is computed at the same position.
absl::Status Positional(const std::vector<float>& in, int64_t batch, std::vector<float>& out) {
  const int64_t per_item = static_cast<int64_t>(in.size()) / batch;
  for (int64_t b = 0; b < batch; ++b) {
    float sum = 0;
    for (int64_t k = 0; k < per_item; ++k) sum += in[b * per_item + k];
    out[2 * b] = 2 * sum + 1000.0f * static_cast<float>(b);
    out[2 * b + 1] = static_cast<float>(b);
  }
  return absl::OkStatus();
}

std::vector<float> MapOn(int ranks, const std::vector<float>& inputs, int64_t items, int64_t batch) {
  std::vector<float> result;
  std::mutex m;
  const absl::Status s = RunRanks(ranks, [&](Communicator& comm) -> absl::Status {
    const BatchedMapOptions o{.items = items, .in_floats = 3, .out_floats = 2, .batch = batch};
    absl::StatusOr<std::vector<float>> out = BatchedMap(comm, inputs.data(), o, Positional);
    if (!out.ok()) return out.status();
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> lock(m);
      result = *out;
    } else if (!out->empty()) {
      return absl::InternalError("a rank other than 0 got outputs");
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return result;
}

TEST(BatchedMap, AnyNumberOfRanksComputesEveryItemAtTheSamePositionInItsCall) {
  const int64_t items = 11, batch = 4;
  std::vector<float> inputs(items * 3);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<float>(i);
  const std::vector<float> one = MapOn(1, inputs, items, batch);
  ASSERT_EQ(one.size(), static_cast<size_t>(items * 2));
  for (int64_t i = 0; i < items; ++i) {
    const float sum = static_cast<float>(9 * i + 3);  // 3i + 3i+1 + 3i+2
    EXPECT_EQ(one[2 * i], 2 * sum + 1000.0f * static_cast<float>(i % batch)) << i;
  }
  for (int ranks : {2, 3, 5}) EXPECT_EQ(MapOn(ranks, inputs, items, batch), one) << ranks << " ranks";
}

TEST(BatchedMap, AFunctionErrorOnOneRankFailsEveryRank) {
  std::vector<float> inputs(8 * 3, 1.0f);
  std::vector<absl::Status> seen(2);
  std::mutex m;
  const absl::Status s = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    const BatchedMapOptions o{.items = 8, .in_floats = 3, .out_floats = 2, .batch = 2};
    const absl::Status got =
        BatchedMap(comm, inputs.data(), o, [&comm](const std::vector<float>&, int64_t, std::vector<float>&) {
          return comm.rank() == 1 ? absl::InternalError("rank 1 broke") : absl::OkStatus();
        }).status();
    std::lock_guard<std::mutex> lock(m);
    seen[comm.rank()] = got;
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(seen[1].message(), HasSubstr("rank 1 broke"));
  EXPECT_TRUE(absl::IsAborted(seen[0])) << seen[0];
  EXPECT_THAT(seen[0].message(), HasSubstr("a batch failed on another rank"));
}

}  // namespace
}  // namespace gantry
