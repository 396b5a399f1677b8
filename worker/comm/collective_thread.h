// Runs one communicator's all-reduces on a thread of their own, in the order they are
// submitted, so that the submitting thread can compute meanwhile: the transport of the
// overlapped gradient exchange (worker/train/overlapped_exchange.h).
//
// The communicator is normally a Duplicate of the one the submitting thread uses, so the
// two threads' collectives never match each other's. Every rank must submit the same
// collectives in the same order, as with any communicator.
//
// Progress: each collective is the communicator's own, run with CommOptions::background
// (MpiCommunicator polls its non-blocking pieces with short sleeps between polls, never
// spinning: see mpi_wait.h), so the bytes move while the submitting thread computes, no
// call of that thread is needed to advance them, and the polling takes little of the
// cores the compute needs.
//
// Failures: the first failed collective is kept; the collectives queued after it are
// skipped, and Wait returns that failure. Every wait is bounded: each collective by the
// options' timeout, Wait by the queue's length times it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "worker/comm/communicator.h"

namespace gantry {

class CollectiveThread {
 public:
  CollectiveThread(std::unique_ptr<Communicator> comm, const CommOptions& options);
  // Lets the collective in progress end (within its timeout), skips the rest, joins.
  ~CollectiveThread();
  CollectiveThread(const CollectiveThread&) = delete;
  CollectiveThread& operator=(const CollectiveThread&) = delete;

  // Queue an in-place sum over the ranks; the buffer belongs to the thread until Wait
  // returns.
  void AllReduceSum(float* data, int64_t count);
  void AllReduceSumBf16(uint16_t* data, int64_t count);

  // Returns once every queued collective has ended: OK, or the first failure (which every
  // later Wait returns too: the communicator is unusable after it).
  absl::Status Wait();

  // The memory the communicator reduces in (Communicator::reduces).
  Device reduces() const { return comm_->reduces(); }

  // Seconds spent inside collectives since the previous call (the thread's busy time).
  double TakeBusySeconds();

 private:
  void Submit(std::function<absl::Status(Communicator&)> collective);
  void Loop();

  const std::unique_ptr<Communicator> comm_;
  const CommOptions options_;
  absl::Mutex mu_;
  std::deque<std::function<absl::Status(Communicator&)>> queue_ ABSL_GUARDED_BY(mu_);
  int64_t unfinished_ ABSL_GUARDED_BY(mu_) = 0;  // queued plus running
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  double busy_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace gantry
