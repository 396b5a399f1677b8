#include "worker/comm/collective_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"

namespace gantry {
namespace {

// Beyond the collectives' own timeouts: the thread's bookkeeping between them.
constexpr double kWaitSlackSeconds = 10;

CommOptions WithBackground(CommOptions options) {
  options.background = true;
  return options;
}

}  // namespace

CollectiveThread::CollectiveThread(std::unique_ptr<Communicator> comm, const CommOptions& options)
    : comm_(std::move(comm)), options_(WithBackground(options)), thread_([this] { Loop(); }) {}

CollectiveThread::~CollectiveThread() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void CollectiveThread::AllReduceSum(float* data, int64_t count) {
  Submit([data, count, this](Communicator& comm) { return comm.AllReduceSum(data, count, options_); });
}

void CollectiveThread::AllReduceSumBf16(uint16_t* data, int64_t count) {
  Submit([data, count, this](Communicator& comm) { return comm.AllReduceSumBf16(data, count, options_); });
}

void CollectiveThread::Submit(std::function<absl::Status(Communicator&)> collective) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(collective));
  ++unfinished_;
}

absl::Status CollectiveThread::Wait() {
  absl::MutexLock lock(&mu_);
  const double bound = static_cast<double>(unfinished_) * options_.timeout_seconds + kWaitSlackSeconds;
  const int64_t left = unfinished_;
  const absl::Time deadline = absl::Now() + absl::Seconds(bound);
  auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return unfinished_ == 0; };
  if (!mu_.AwaitWithDeadline(absl::Condition(&done), deadline)) {
    return absl::DeadlineExceededError(absl::StrCat("rank ", comm_->rank(), ": the gradient exchange's ", left,
                                                    " all-reduce(s) did not end within ", bound, " s"));
  }
  return failure_;
}

double CollectiveThread::TakeBusySeconds() {
  absl::MutexLock lock(&mu_);
  return std::exchange(busy_seconds_, 0.0);
}

void CollectiveThread::Loop() {
  for (;;) {
    std::function<absl::Status(Communicator&)> collective;
    bool skip = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      collective = std::move(queue_.front());
      queue_.pop_front();
      skip = stopping_ || !failure_.ok();
    }
    const double t0 = Clock::Real().NowSeconds();
    const absl::Status status = skip ? absl::OkStatus() : collective(*comm_);
    const double spent = Clock::Real().NowSeconds() - t0;
    absl::MutexLock lock(&mu_);
    if (failure_.ok() && !status.ok()) failure_ = status;
    busy_seconds_ += spent;
    --unfinished_;
  }
}

}  // namespace gantry
