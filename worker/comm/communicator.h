// The seam between training and the transport that joins its ranks: a fixed group of
// `size()` ranks that run the same sequence of collectives. Backends: LocalGroup (ranks
// as threads of one process, for tests) and MpiCommunicator (one process per rank).
//
// Every rank must call the same collectives, with the same counts and roots, in the same
// order; collectives are numbered #1, #2, ... in that order (all kinds share one counter)
// and error messages use those numbers.
//
// Failures: no call waits forever. A collective that does not complete within
// opts.timeout_seconds returns absl::DeadlineExceededError naming this rank, the
// collective, its size, the timeout and, when known, the ranks that never arrived:
//   "rank 0: all-reduce #17 of 2518337 floats timed out after 30 s; rank 1 did not
//    arrive (dead or stuck?)"
// InvalidArgument (a bad count, root, buffer or timeout) starts nothing and leaves the
// communicator usable. After any other error it is unusable: later calls fail at once (a
// timed-out collective may still own the caller's buffer), and the caller is expected to
// log the error and end the process (MpiCommunicator::Abort in an MPI job).
//
// A communicator is used from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/tensor/device.h"

namespace gantry {

struct CommOptions {
  // Bound on each collective; must be positive and finite.
  double timeout_seconds = 120;
  // The calling thread runs beside the compute (the overlapped exchange's thread): a
  // transport that polls (MPI) sleeps between polls from the start instead of spinning
  // first, leaving the cores to backward; the transfer itself is hidden behind it.
  bool background = false;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // For logs and run.json only ("local" | "mpi" | "nccl"); ask capabilities below instead.
  virtual std::string backend_name() const = 0;
  // Whether the ranks are threads of one process (and so share its CPU-time count, its
  // GPU and its memory) rather than a process each.
  virtual bool ranks_share_a_process() const = 0;
  // The memory AllReduceSum and AllReduceSumBf16 work in: host memory, or the GPU's for
  // NCCL. Broadcast, Gather and Barrier always take host memory.
  virtual Device reduces() const { return Device::kCpu; }

  // In-place element-wise sum over all ranks of `count` floats. Every rank receives the
  // same bytes (see each backend for how the summation order is fixed).
  virtual absl::Status AllReduceSum(float* data, int64_t count, const CommOptions& opts) = 0;
  // In-place element-wise sum over all ranks of `count` bfloat16 values (raw bits, see
  // worker/tensor/bf16_wire.h): half the bytes of AllReduceSum on the wire. Each addition
  // of two partial sums is done in fp32 and rounded once to bf16 (SumBf16Into), so a sum
  // over n ranks is rounded n - 1 times. Every rank receives the same bytes, as with
  // AllReduceSum; the same timeout and failure rules apply.
  virtual absl::Status AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) = 0;
  // Root's `bytes` bytes are copied to every other rank's `data`.
  virtual absl::Status Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) = 0;
  // Each rank contributes `bytes` bytes; on root, `recv` receives size()*bytes bytes in
  // rank order (ignored elsewhere; may be null there).
  virtual absl::Status Gather(const void* send, int64_t bytes, void* recv, int root,
                              const CommOptions& opts) = 0;
  // Returns once every rank has called Barrier.
  virtual absl::Status Barrier(const CommOptions& opts) = 0;

  // A second communicator over the same ranks, with its own numbering of collectives, so
  // that one thread (the overlapped gradient exchange's) can run collectives on it while
  // another runs this one's: the two sequences never match each other's calls. The
  // duplicate belongs to the first thread that runs a collective on it; it may be
  // destroyed from any thread once that thread is done with it, and must be destroyed
  // before this communicator. Collective: every rank calls Duplicate at the same point
  // of this communicator's sequence. Unimplemented where the transport cannot run two
  // threads' collectives at once; the caller then exchanges on this thread.
  virtual absl::StatusOr<std::unique_ptr<Communicator>> Duplicate(const CommOptions& opts) {
    return absl::UnimplementedError(backend_name() + " cannot run collectives from a second thread");
  }
};

}  // namespace gantry
