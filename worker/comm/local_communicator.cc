#include "worker/comm/local_communicator.h"

#include <cstddef>
#include <cstring>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "worker/comm/collective.h"
#include "worker/tensor/bf16_wire.h"

namespace gantry {
namespace {

using Bytes = std::vector<std::byte>;

Bytes CopyIn(const void* data, int64_t bytes) {
  Bytes copy(static_cast<size_t>(bytes));
  if (bytes > 0) std::memcpy(copy.data(), data, copy.size());
  return copy;
}

}  // namespace

class LocalRendezvous {
 public:
  // One collective while ranks gather at it. Every field is guarded by the rendezvous'
  // mutex until arrivals == size; after that it is read-only, and the ranks read
  // `inputs` without the lock.
  struct Pending {
    Pending(const CollectiveCall& c, int first, int size)
        : call(c), first_rank(first), inputs(size), arrived(size, false) {}
    const CollectiveCall call;
    const int first_rank;
    std::vector<Bytes> inputs;
    std::vector<bool> arrived;
    int arrivals = 0;
    absl::Status failure;
  };

  explicit LocalRendezvous(int size) : size_(size) {}
  int size() const { return size_; }

  // The rendezvous of this group's index-th duplicate (Communicator::Duplicate): made by
  // the first rank that asks, shared by the rest.
  std::shared_ptr<LocalRendezvous> Duplicate(int64_t index) {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<LocalRendezvous>& slot = duplicates_[index];
    if (slot == nullptr) slot = std::make_shared<LocalRendezvous>(size_);
    return slot;
  }

  // Adds rank `rank`'s input to collective `call` and waits until every rank has added
  // its own. Returns the completed collective, whose inputs are then read-only.
  absl::StatusOr<std::shared_ptr<const Pending>> Arrive(int rank, const CollectiveCall& call, Bytes input,
                                                        const CommOptions& opts) {
    const absl::Time deadline = absl::Now() + absl::Seconds(opts.timeout_seconds);
    absl::MutexLock lock(&mu_);
    if (!broken_.ok()) {
      return absl::AbortedError(absl::StrCat("rank ", rank, ": ", Describe(call),
                                             " refused: the group failed earlier: ", broken_.message()));
    }
    std::shared_ptr<Pending>& slot = pending_[call.seq];
    if (slot == nullptr) slot = std::make_shared<Pending>(call, rank, size_);
    std::shared_ptr<Pending> p = slot;
    if (!p->call.SameShape(call)) return Break(p.get(), Mismatch(rank, call, *p));
    CHECK(!p->arrived[rank]) << "rank " << rank << " arrived twice at " << Describe(call);
    p->inputs[rank] = std::move(input);
    p->arrived[rank] = true;
    if (++p->arrivals == size_) {
      pending_.erase(call.seq);
      all_arrived_.SignalAll();
      return p;
    }
    while (p->arrivals < size_ && p->failure.ok() && absl::Now() < deadline) {
      all_arrived_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    if (!p->failure.ok()) return p->failure;
    if (p->arrivals < size_) return Break(nullptr, Timeout(rank, *p, opts));
    return p;
  }

 private:
  static absl::Status Mismatch(int rank, const CollectiveCall& call, const Pending& p) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " called ", Describe(call), " but rank ",
                                                   p.first_rank, " called ", Describe(p.call)));
  }

  absl::Status Timeout(int rank, const Pending& p, const CommOptions& opts) const {
    std::vector<int> missing;
    for (int r = 0; r < size_; ++r) {
      if (!p.arrived[r]) missing.push_back(r);
    }
    return TimeoutError(rank, p.call, opts.timeout_seconds, DidNotArrive(missing));
  }

  // Records the group's first failure; `p`, when given, fails the ranks waiting on it
  // now (a timeout leaves them to reach their own deadlines and name the missing ranks).
  absl::Status Break(Pending* p, absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (broken_.ok()) broken_ = status;
    if (p != nullptr) {
      p->failure = status;
      all_arrived_.SignalAll();
    }
    return status;
  }

  const int size_;
  absl::Mutex mu_;
  absl::CondVar all_arrived_;
  // Collectives that some but not all ranks have reached, by number.
  std::map<int64_t, std::shared_ptr<Pending>> pending_ ABSL_GUARDED_BY(mu_);
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<LocalRendezvous>> duplicates_ ABSL_GUARDED_BY(mu_);
};

namespace {

// Sums rank by rank so that every rank performs the same additions in the same order.
void SumInRankOrder(const std::vector<Bytes>& inputs, float* out, int64_t count) {
  std::memcpy(out, inputs[0].data(), static_cast<size_t>(count) * sizeof(float));
  for (size_t r = 1; r < inputs.size(); ++r) {
    const float* in = reinterpret_cast<const float*>(inputs[r].data());
    for (int64_t i = 0; i < count; ++i) out[i] += in[i];
  }
}

// The bf16 version: each step adds one rank's values in fp32 and rounds once, as the
// MPI reduction does for each pair it combines.
void SumBf16InRankOrder(const std::vector<Bytes>& inputs, uint16_t* out, int64_t count) {
  std::memcpy(out, inputs[0].data(), static_cast<size_t>(count) * sizeof(uint16_t));
  for (size_t r = 1; r < inputs.size(); ++r) {
    SumBf16Into(reinterpret_cast<const uint16_t*>(inputs[r].data()), out, count);
  }
}

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalRendezvous> rendezvous, int rank)
      : rendezvous_(std::move(rendezvous)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return rendezvous_->size(); }
  std::string backend_name() const override { return "local"; }
  bool ranks_share_a_process() const override { return true; }

  absl::Status AllReduceSum(float* data, int64_t count, const CommOptions& opts) override {
    const CollectiveCall call{CollectiveKind::kAllReduce, next_seq_, count, -1};
    RETURN_IF_ERROR(ValidateCall(rank_, size(), call, data, nullptr, opts));
    ASSIGN_OR_RETURN(auto done, Arrive(call, CopyIn(data, count * int64_t{sizeof(float)}), opts));
    if (count > 0) SumInRankOrder(done->inputs, data, count);
    return absl::OkStatus();
  }

  absl::Status AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) override {
    const CollectiveCall call{CollectiveKind::kAllReduceBf16, next_seq_, count, -1};
    RETURN_IF_ERROR(ValidateCall(rank_, size(), call, data, nullptr, opts));
    ASSIGN_OR_RETURN(auto done, Arrive(call, CopyIn(data, count * int64_t{sizeof(uint16_t)}), opts));
    if (count > 0) SumBf16InRankOrder(done->inputs, data, count);
    return absl::OkStatus();
  }

  absl::Status Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) override {
    const CollectiveCall call{CollectiveKind::kBroadcast, next_seq_, bytes, root};
    RETURN_IF_ERROR(ValidateCall(rank_, size(), call, data, nullptr, opts));
    ASSIGN_OR_RETURN(auto done, Arrive(call, rank_ == root ? CopyIn(data, bytes) : Bytes(), opts));
    if (rank_ != root && bytes > 0) std::memcpy(data, done->inputs[root].data(), static_cast<size_t>(bytes));
    return absl::OkStatus();
  }

  absl::Status Gather(const void* send, int64_t bytes, void* recv, int root,
                      const CommOptions& opts) override {
    const CollectiveCall call{CollectiveKind::kGather, next_seq_, bytes, root};
    RETURN_IF_ERROR(ValidateCall(rank_, size(), call, send, recv, opts));
    ASSIGN_OR_RETURN(auto done, Arrive(call, CopyIn(send, bytes), opts));
    if (rank_ != root || bytes == 0) return absl::OkStatus();
    for (int r = 0; r < size(); ++r) {
      std::memcpy(static_cast<std::byte*>(recv) + r * bytes, done->inputs[r].data(),
                  static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }

  absl::Status Barrier(const CommOptions& opts) override {
    const CollectiveCall call{CollectiveKind::kBarrier, next_seq_, 0, -1};
    RETURN_IF_ERROR(ValidateCall(rank_, size(), call, nullptr, nullptr, opts));
    return Arrive(call, Bytes(), opts).status();
  }

  // A duplicate is another group of the same size: the k-th Duplicate of every rank joins
  // the k-th one. Nothing is exchanged, so no timeout applies.
  absl::StatusOr<std::unique_ptr<Communicator>> Duplicate(const CommOptions&) override {
    return std::make_unique<LocalCommunicator>(rendezvous_->Duplicate(duplicates_made_++), rank_);
  }

 private:
  // Numbers the call only once it passed validation, so a rejected call takes no number.
  absl::StatusOr<std::shared_ptr<const LocalRendezvous::Pending>> Arrive(const CollectiveCall& call,
                                                                         Bytes input,
                                                                         const CommOptions& opts) {
    ++next_seq_;
    return rendezvous_->Arrive(rank_, call, std::move(input), opts);
  }

  const std::shared_ptr<LocalRendezvous> rendezvous_;
  const int rank_;
  int64_t next_seq_ = 1;
  int64_t duplicates_made_ = 0;
};

}  // namespace

LocalGroup::LocalGroup(int size) : handed_out_(static_cast<size_t>(size), false) {
  CHECK_GE(size, 1);
  rendezvous_ = std::make_shared<LocalRendezvous>(size);
}

LocalGroup::~LocalGroup() = default;

int LocalGroup::size() const { return rendezvous_->size(); }

std::unique_ptr<Communicator> LocalGroup::Rank(int r) {
  CHECK(r >= 0 && r < size()) << "rank " << r << " of a group of " << size();
  CHECK(!handed_out_[r]) << "rank " << r << " was already handed out";
  handed_out_[r] = true;
  return std::make_unique<LocalCommunicator>(rendezvous_, r);
}

absl::Status RunRanks(int size, const std::function<absl::Status(Communicator&)>& body) {
  LocalGroup group(size);
  std::vector<absl::Status> statuses(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  threads.reserve(statuses.size());
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&body, &statuses, r, comm = group.Rank(r)] { statuses[r] = body(*comm); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gantry
