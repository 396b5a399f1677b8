// The ranks of one MPI world (Open MPI), one process each: `mpirun -np N gantry-worker`.
//
// Collectives are MPI's non-blocking ones (MPI_Iallreduce, MPI_Ibcast, MPI_Igather,
// MPI_Ibarrier) completed by polling against the deadline (see WaitUntil in mpi_wait.h),
// on a private duplicate of MPI_COMM_WORLD. A timeout names the ranks that did not arrive
// as far as this rank can tell (see ArrivalBoard): rank 0 names any rank; another rank
// names rank 0 or says that rank 0 arrived. In the last case (only with more than 2
// ranks) the rank waits min(1 s, timeout / 4) longer before it gives up, so that rank 0,
// timing out at about the same moment, reports the missing ranks first; if the caller
// aborts on error, rank 0's precise message is the one that ends the job.
//
// AllReduceSum is MPI_SUM over MPI_FLOAT, in place, through MPI_Iallreduce; programs select
// Open MPI's ring algorithm for it before MPI starts (mpi_environment.h): the default
// reduces to rank 0 and broadcasts back at fewer than 4 ranks or in place, 2 to 2.6 times
// slower from 1 MB up. Every rank receives the same bytes:
// the ring computes each element's sum once and then copies it to every rank; Open MPI
// 4.1's other libnbc algorithms (binomial, reduce-scatter + allgather, recursive doubling)
// also gave bit-identical results. tests/comm/mpi_collectives_main.cc checks this by
// comparing checksums across ranks, for 1 to 2518337 floats (ctest at 2 ranks; also run
// by hand at 3 to 5 ranks and with each algorithm). The summation order is not rank order
// beyond 2 ranks, so the bits may differ from LocalGroup's.
//
// Both all-reduces run in pieces of 64 Ki values per rank (128 Ki values, 512 KB of fp32, at
// 2 ranks), two in flight, each its own MPI_Iallreduce: the piece is the unit of the sum, so
// the bytes every rank gets are those of an all-reduce of each piece. Why: Open MPI moves
// large messages in fragments and a non-blocking collective advances only inside MPI_Test;
// once the wait backs off to sleeping (mpi_wait.h) one 217 MB MPI_Iallreduce crawled (2.4 s
// against 0.12 s blocking where the shared-memory transport has no single-copy mechanism,
// as in containers), while pieces finish inside the wait's busy phase, and pieces small
// enough to stay in cache move faster than MPI's own blocking all-reduce. Measured with
// bench/allreduce_bench.cc at 2 ranks on one node, 54.4 M floats: one call 88-90 ms (cma),
// 2.4 s (no single copy), 177 ms (TCP); in pieces 40, 52 and 88 ms; blocking MPI_Allreduce
// 78-80, 124-128 and 171 ms. Pieces of 64 Ki to 1 Mi values were within 10 ms of each
// other; 4 Mi values per piece lost most of the gain.
//
// AllReduceSumBf16 is the same ring MPI_Iallreduce over MPI_UINT16_T with a commutative
// user MPI_Op that adds pairs in fp32 and rounds once (mpi_bf16_sum.h). The ring reduces
// each element once and then copies it, so every rank again receives the same bytes
// (checked by the same test, at 2 ranks also against LocalGroup's bits).
//
// Threading: MPI is initialized asking for MPI_THREAD_MULTIPLE and needing at least
// MPI_THREAD_FUNNELED. Every call on the communicator Create returns, the destructor
// included, must come from the thread that called Create (CHECKed). Duplicate (which
// needs MPI_THREAD_MULTIPLE) makes a communicator over private duplicates of this one's,
// owned by the first thread that runs a collective on it; its destructor only settles
// its arrival messages and frees its MPI communicators (no barrier, no MPI_Finalize).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/collective.h"
#include "worker/comm/communicator.h"
#include "worker/comm/mpi_arrivals.h"
#include "worker/comm/mpi_wait.h"

namespace gantry {

class MpiCommunicator final : public Communicator {
 public:
  // Initializes MPI (MPI_Init_thread, at least MPI_THREAD_FUNNELED) and duplicates
  // MPI_COMM_WORLD for the collectives and again for the arrival messages. MPI can be
  // initialized once per process, so this succeeds at most once. Without mpirun, Open MPI
  // starts a world of one rank.
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create(int* argc, char*** argv);
  // Whether this process was started by mpirun (Open MPI / PMIx environment variables).
  static bool LaunchedUnderMpi();

  // After a clean run: a final barrier (default timeout) so no rank finalizes while a
  // peer still needs it, then MPI_Finalize. After a failure, or if that barrier fails,
  // it prints why to stderr and leaves MPI unfinalized rather than risk hanging in
  // MPI_Finalize; mpirun then reports the job as failed.
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "mpi"; }
  bool ranks_share_a_process() const override { return false; }

  absl::Status AllReduceSum(float* data, int64_t count, const CommOptions& opts) override;
  absl::Status AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) override;
  absl::Status Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) override;
  absl::Status Gather(const void* send, int64_t bytes, void* recv, int root,
                      const CommOptions& opts) override;
  absl::Status Barrier(const CommOptions& opts) override;
  absl::StatusOr<std::unique_ptr<Communicator>> Duplicate(const CommOptions& opts) override;

  // Ends every rank of the job (MPI_Abort on MPI_COMM_WORLD) with exit code `code`, so
  // mpirun exits non-zero. The way out after a collective failed.
  [[noreturn]] void Abort(int code);

 private:
  // owns_mpi: the communicator Create returns (it finalizes MPI and frees bf16_sum);
  // false for a Duplicate.
  MpiCommunicator(MPI_Comm comm, MPI_Comm arrival_comm, std::unique_ptr<ArrivalBoard> arrivals, MPI_Op bf16_sum,
                  int thread_level, bool owns_mpi);

  // Numbers `call`, announces it, posts its `pieces` with `start(piece, &request)` (an
  // MPI_I* call named `what`), at most two at a time, and waits for them all until the
  // deadline.
  template <typename Start>
  absl::Status Run(CollectiveCall call, const CommOptions& opts, const char* what, int64_t pieces, Start start);
  // After this rank's deadline passed with collective `seq` incomplete: keeps waiting a
  // while (see the file comment) when rank 0 can name the missing ranks and this rank can't.
  absl::StatusOr<bool> GraceForRankZero(MPI_Request* request, int64_t seq, const CommOptions& opts);
  // The "; ..." part of a timeout message: who did not arrive at collective `seq`.
  std::string Diagnose(int64_t seq) const;
  // Records the first failure, after which every call is refused.
  absl::Status Fail(absl::Status status);

  MPI_Comm comm_;
  MPI_Comm arrival_comm_;
  std::unique_ptr<ArrivalBoard> arrivals_;
  MPI_Op bf16_sum_;
  int rank_ = 0;
  int size_ = 1;
  int64_t next_seq_ = 1;
  absl::Status failed_;
  const bool yield_ = OversubscribedByMpirun();
  const int thread_level_;  // what MPI_Init_thread provided
  const bool owns_mpi_;
  std::thread::id owner_;  // none yet: a duplicate no thread has used
};

}  // namespace gantry
