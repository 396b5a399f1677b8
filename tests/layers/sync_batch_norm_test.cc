// Synchronised BatchNorm: replicas, each with its own BatchNorm and a share of the rows,
// run in threads that meet in a summing reducer; together they must reproduce one
// BatchNorm on the whole batch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/batch_norm.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {
namespace {

using ::gantry::testing::RandomTensor;

// The reducers of `replicas` threads: each Sum blocks until every replica has called it,
// then all receive the element-wise sum taken in replica order, so bit-identical results.
// A replica that waits too long fails the test and returns its data unchanged.
class ThreadReducerGroup {
 public:
  explicit ThreadReducerGroup(int replicas) : inputs_(static_cast<size_t>(replicas)) {
    for (int r = 0; r < replicas; ++r) members_.push_back(std::make_unique<Member>(this, r));
  }
  ReplicaReducer* reducer(int rank) { return members_[rank].get(); }
  int rounds() const { return rounds_; }

 private:
  static constexpr std::chrono::seconds kTimeout{20};
  struct Input {
    float* data = nullptr;
    int64_t count = 0;
  };
  class Member final : public ReplicaReducer {
   public:
    Member(ThreadReducerGroup* group, int rank) : group_(group), rank_(rank) {}
    void Sum(float* data, int64_t count) override { group_->Sum(rank_, data, count); }

   private:
    ThreadReducerGroup* group_;
    int rank_;
  };

  int size() const { return static_cast<int>(inputs_.size()); }

  void Sum(int rank, float* data, int64_t count) {
    std::unique_lock lock(mu_);
    // A replica fast enough to start the next round waits for the last to leave this one.
    if (!cv_.wait_for(lock, kTimeout, [&] { return !releasing_; })) return Timeout(rank);
    inputs_[rank] = {data, count};
    if (++arrived_ == size()) {
      Reduce();
      releasing_ = true;
      cv_.notify_all();
    } else if (!cv_.wait_for(lock, kTimeout, [&] { return releasing_; })) {
      return Timeout(rank);
    }
    std::copy_n(result_.begin(), std::min<int64_t>(count, std::ssize(result_)), data);
    if (++departed_ == size()) {
      arrived_ = departed_ = 0;
      releasing_ = false;
      ++rounds_;
      cv_.notify_all();
    }
  }
  void Reduce() {
    result_.assign(static_cast<size_t>(inputs_[0].count), 0.0f);
    for (const Input& in : inputs_) {
      EXPECT_EQ(in.count, inputs_[0].count) << "replicas disagree on the size of a Sum";
      for (int64_t j = 0; j < std::min<int64_t>(in.count, std::ssize(result_)); ++j) result_[j] += in.data[j];
    }
  }
  void Timeout(int rank) {
    ADD_FAILURE() << "replica " << rank << " waited " << kTimeout.count() << " s in Sum";
  }

  std::vector<std::unique_ptr<Member>> members_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Input> inputs_;
  std::vector<float> result_;
  int arrived_ = 0, departed_ = 0, rounds_ = 0;
  bool releasing_ = false;
};

// Leaves data unchanged, as one replica alone (or a reducer whose peers failed) does,
// and records the size of every call.
class IdentityReducer final : public ReplicaReducer {
 public:
  void Sum(float*, int64_t count) override { counts.push_back(count); }
  std::vector<int64_t> counts;
};

constexpr int64_t kChannels = 3;

// A BatchNorm bound to its own flat buffers with non-trivial gamma, beta and running
// statistics, the same for every instance.
struct BoundSyncBatchNorm {
  BoundSyncBatchNorm() : layer(kChannels, 1e-3f, 0.9f), params(std::span<Layer* const>(layers)) {
    Rng rng(1);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    float* p = params.params().data();  // gamma then beta
    for (int64_t ch = 0; ch < kChannels; ++ch) {
      const float f = static_cast<float>(ch);
      p[ch] = 0.5f + 0.25f * f;
      p[kChannels + ch] = 0.1f * f - 0.2f;
      layer.running_mean().data()[ch] = 0.2f + 0.1f * f;
      layer.running_var().data()[ch] = 1.5f + 0.5f * f;
    }
  }
  BatchNorm layer;
  Layer* layers[1] = {&layer};
  FlatParameters params;
};

// What one BatchNorm produced for one Forward/Backward from zeroed gradients.
struct Result {
  Tensor y, dx, grads, buffers;
};

Result ForwardBackward(BoundSyncBatchNorm& bn, const Context& ctx, const Tensor& x, const Tensor& dy) {
  ActivationCache cache;
  Result out;
  out.y = bn.layer.Forward(ctx, x, &cache);
  bn.params.ZeroGrads();
  out.dx = bn.layer.Backward(ctx, dy, cache, /*want_input_grad=*/true);
  out.grads = bn.params.grads().Clone();
  out.buffers = bn.params.buffers().Clone();
  return out;
}

// Rows of x and dy split into consecutive shares of `rows`, one synchronised replica each.
std::vector<Result> RunReplicas(const std::vector<int64_t>& rows, const Tensor& x, const Tensor& dy) {
  const int replicas = static_cast<int>(rows.size());
  ThreadReducerGroup group(replicas);
  std::vector<std::unique_ptr<BoundSyncBatchNorm>> bns;
  for (int r = 0; r < replicas; ++r) bns.push_back(std::make_unique<BoundSyncBatchNorm>());
  std::vector<Result> results(static_cast<size_t>(replicas));
  std::vector<std::thread> threads;
  int64_t begin = 0;
  for (int r = 0; r < replicas; ++r) {
    const int64_t end = begin + rows[r];
    threads.emplace_back([&, r, begin, end] {
      Context ctx;
      ctx.sync_bn = group.reducer(r);
      results[r] = ForwardBackward(*bns[r], ctx, x.Slice(begin, end), dy.Slice(begin, end));
    });
    begin = end;
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(begin, x.dim(0));
  EXPECT_EQ(group.rounds(), 3) << "two Sums in Forward, one in Backward";
  return results;
}

// A batch whose rows drift (row i is offset by 0.7 i), so shares of different sizes have
// different statistics and an unweighted mean of the replicas' means would be wrong.
Tensor DriftingBatch(const Shape& shape, uint64_t seed) {
  Tensor t = RandomTensor(shape, seed, 2.0f);
  const int64_t row = t.numel() / shape[0];
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] += 0.7f * static_cast<float>(i / row);
  return t;
}

// |actual - expected| <= rel * max|expected| per element: relative to the tensor's scale,
// so elements near zero ask no more than the tensor's own precision.
void ExpectSyncClose(const float* actual, const float* expected, int64_t n, double rel, const std::string& what) {
  double scale = 0.0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(double{expected[i]}));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(actual[i], expected[i], rel * scale) << what << " [" << i << "]";
  }
}

struct Split {
  Shape shape;
  std::vector<int64_t> rows;
};

std::vector<Split> Splits() {
  std::vector<Split> splits;
  for (const Shape& shape : {Shape{8, kChannels}, Shape{8, kChannels, 3, 4}}) {
    for (const std::vector<int64_t>& rows :
         {std::vector<int64_t>{4, 4}, {2, 2, 2, 2}, {3, 5}, {1, 2, 2, 3}, {0, 3, 5}}) {
      splits.push_back({shape, rows});
    }
  }
  return splits;
}

std::string DescribeSyncCase(const Split& s) {
  std::string out = s.shape.ToString() + " rows";
  for (int64_t r : s.rows) out.append(" ").append(std::to_string(r));
  return out;
}

TEST(SyncBatchNormTest, ForwardMatchesTheWholeBatch) {
  for (const Split& split : Splits()) {
    SCOPED_TRACE(DescribeSyncCase(split));
    const Tensor x = DriftingBatch(split.shape, 11), dy = RandomTensor(split.shape, 12);
    BoundSyncBatchNorm whole;
    const Result expected = ForwardBackward(whole, Context{}, x, dy);
    const std::vector<Result> replicas = RunReplicas(split.rows, x, dy);
    int64_t offset = 0;
    for (const Result& r : replicas) {
      ExpectSyncClose(r.y.data(), expected.y.data() + offset, r.y.numel(), 1e-6, "y");
      offset += r.y.numel();
      ExpectSyncClose(r.buffers.data(), expected.buffers.data(), r.buffers.numel(), 1e-6, "running stats");
      for (int64_t i = 0; i < r.buffers.numel(); ++i) {
        EXPECT_EQ(r.buffers.at(i), replicas[0].buffers.at(i)) << "replicas' running stats differ at " << i;
      }
    }
  }
}

TEST(SyncBatchNormTest, BackwardMatchesTheWholeBatchAndParamGradsSumToIt) {
  for (const Split& split : Splits()) {
    SCOPED_TRACE(DescribeSyncCase(split));
    const Tensor x = DriftingBatch(split.shape, 21), dy = DriftingBatch(split.shape, 22);
    BoundSyncBatchNorm whole;
    const Result expected = ForwardBackward(whole, Context{}, x, dy);
    const std::vector<Result> replicas = RunReplicas(split.rows, x, dy);
    Tensor grad_sum = Tensor::Zeros(expected.grads.shape());
    int64_t offset = 0;
    for (const Result& r : replicas) {
      ExpectSyncClose(r.dx.data(), expected.dx.data() + offset, r.dx.numel(), 1e-5, "dx");
      offset += r.dx.numel();
      for (int64_t i = 0; i < grad_sum.numel(); ++i) grad_sum.data()[i] += r.grads.at(i);
    }
    ExpectSyncClose(grad_sum.data(), expected.grads.data(), grad_sum.numel(), 1e-5, "summed dgamma, dbeta");
  }
}

TEST(SyncBatchNormTest, UnchangedSumsGivePerRankStatisticsAndReducerCallsAreAsDocumented) {
  const Shape shape{5, kChannels, 2, 2};
  const Tensor x = DriftingBatch(shape, 31), dy = RandomTensor(shape, 32);
  BoundSyncBatchNorm local, synced;
  const Result expected = ForwardBackward(local, Context{}, x, dy);
  IdentityReducer reducer;
  Context ctx;
  ctx.sync_bn = &reducer;
  const Result got = ForwardBackward(synced, ctx, x, dy);
  EXPECT_EQ(reducer.counts, (std::vector<int64_t>{kChannels + 1, kChannels, 2 * kChannels}));
  ExpectSyncClose(got.y.data(), expected.y.data(), got.y.numel(), 1e-6, "y");
  ExpectSyncClose(got.dx.data(), expected.dx.data(), got.dx.numel(), 1e-5, "dx");
  ExpectSyncClose(got.grads.data(), expected.grads.data(), got.grads.numel(), 1e-5, "dgamma, dbeta");
  ExpectSyncClose(got.buffers.data(), expected.buffers.data(), got.buffers.numel(), 1e-6, "running stats");

  // Without dx a Backward needs no global sums, so it makes no Sum; without param_grads it
  // leaves the gradients alone.
  ActivationCache cache;
  synced.layer.Forward(ctx, x, &cache);
  reducer.counts.clear();
  synced.params.ZeroGrads();
  EXPECT_FALSE(synced.layer.Backward(ctx, dy, cache, /*want_input_grad=*/false).defined());
  EXPECT_TRUE(reducer.counts.empty());
  const Tensor& grads = synced.params.grads();
  ExpectSyncClose(grads.data(), expected.grads.data(), grads.numel(), 1e-5, "grads only");
  ctx.param_grads = false;
  synced.params.ZeroGrads();
  const Tensor dx = synced.layer.Backward(ctx, dy, cache, true);
  ExpectSyncClose(dx.data(), expected.dx.data(), dx.numel(), 1e-5, "dx without param grads");
  for (int64_t i = 0; i < synced.params.grads().numel(); ++i) EXPECT_EQ(synced.params.grads().at(i), 0.0f);
}

TEST(SyncBatchNormTest, AFailedSumOnOneRowNeitherAbortsNorTouchesTheRunningStats) {
  // A replica with one row of a 1d BatchNorm whose Sums fail: one value per channel.
  BoundSyncBatchNorm bn;
  const Tensor before = bn.params.buffers().Clone();
  IdentityReducer failed;
  Context ctx;
  ctx.sync_bn = &failed;
  const Tensor x = RandomTensor(Shape{1, kChannels}, 51), dy = RandomTensor(Shape{1, kChannels}, 52);
  const Result got = ForwardBackward(bn, ctx, x, dy);
  for (int64_t i = 0; i < got.y.numel(); ++i) EXPECT_TRUE(std::isfinite(got.y.at(i))) << "y " << i;
  for (int64_t i = 0; i < got.dx.numel(); ++i) EXPECT_TRUE(std::isfinite(got.dx.at(i))) << "dx " << i;
  for (int64_t i = 0; i < before.numel(); ++i) EXPECT_EQ(got.buffers.at(i), before.at(i)) << i;
}

TEST(SyncBatchNormDeathTest, BackwardOfASynchronisedForwardNeedsTheReducer) {
  BoundSyncBatchNorm bn;
  IdentityReducer reducer;
  Context ctx;
  ctx.sync_bn = &reducer;
  const Tensor x = RandomTensor(Shape{4, kChannels}, 41), dy = RandomTensor(Shape{4, kChannels}, 42);
  ActivationCache cache;
  bn.layer.Forward(ctx, x, &cache);
  EXPECT_DEATH(bn.layer.Backward(Context{}, dy, cache, true), "sync_bn");
}

}  // namespace
}  // namespace gantry
