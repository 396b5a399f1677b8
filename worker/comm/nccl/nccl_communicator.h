// The ranks of an MPI job all-reducing GPU buffers over NCCL, one GPU per rank.
//
// The host communicator (MpiCommunicator in a job) stays the control plane: it
// broadcasts NCCL's unique id at creation, and Broadcast, Gather and Barrier (host
// memory) go to it unchanged. AllReduceSum / AllReduceSumBf16 take DEVICE pointers and
// run ncclAllReduce (ncclFloat32 / ncclBfloat16, ncclSum) on the process's compute
// stream (worker/tensor/cuda/cuda_memory.h), after the kernels that produced the
// gradients and before the ones that read them.
//
// Timeout, not hang (the Communicator contract): each all-reduce first passes a barrier
// on the host communicator under the caller's timeout, which names the ranks that never
// arrived exactly as MpiCommunicator does; then the NCCL collective is polled
// (cudaStreamQuery and ncclCommGetAsyncError) against the rest of the deadline. A
// collective that still does not finish (every rank arrived, but the GPUs or the network
// stalled) aborts the NCCL communicator (ncclCommAbort) and returns DeadlineExceeded
// saying so. The communicator is non-blocking (ncclConfig_t.blocking = 0), so its
// creation is polled against a deadline too. After any error it is unusable.
//
// Duplicate (for the overlapped gradient exchange's collective thread): a second NCCL
// communicator split from this one (ncclCommSplit), with a CUDA stream of its own and a
// Duplicate of the host communicator for its barriers. Each of its all-reduces first
// makes its stream wait for the work queued on the compute stream so far (the kernels
// that produced the gradients it reads), then runs beside the compute queued after it:
// the bytes move while backward goes on. Called from any thread (it selects the device
// it was made on).
//
// Every rank receives the same bytes: NCCL's ring and tree all-reduces compute each
// element's sum once and broadcast it. For bf16, NCCL adds in fp32 and rounds to bf16 per
// addition, as AllReduceSumBf16's contract says; the order of the additions is NCCL's.
//
// Not yet run on a GPU: compiled and linked here, tested under mpirun where the test
// binary finds two devices (tests/gpu/nccl_allreduce_main.cc), skipped otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace gantry {

class NcclCommunicator final : public Communicator {
 public:
  // Joins the NCCL communicator of all of `host`'s ranks on the current CUDA device
  // (select it first: cuda::SelectDeviceForLocalRank(LocalRank())). `host` must outlive
  // the result. Collective on `host`.
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> Create(Communicator& host, const CommOptions& opts);
  ~NcclCommunicator() override;

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  std::string backend_name() const override { return "nccl"; }
  bool ranks_share_a_process() const override { return false; }
  Device reduces() const override { return Device::kCuda; }

  // `data` is device memory.
  absl::Status AllReduceSum(float* data, int64_t count, const CommOptions& opts) override;
  absl::Status AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) override;
  // Host memory, through the host communicator.
  absl::Status Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) override;
  absl::Status Gather(const void* send, int64_t bytes, void* recv, int root, const CommOptions& opts) override;
  absl::Status Barrier(const CommOptions& opts) override;
  // See above. Collective on this communicator (and on its host communicator).
  absl::StatusOr<std::unique_ptr<Communicator>> Duplicate(const CommOptions& opts) override;

 private:
  struct State;
  NcclCommunicator(Communicator& host, std::unique_ptr<State> state);
  absl::Status AllReduce(void* data, int64_t count, bool bf16, const CommOptions& opts);
  void ReleaseDuplicateStream();

  std::unique_ptr<Communicator> owned_host_;  // a duplicate's own host communicator (null otherwise)
  Communicator& host_;
  std::unique_ptr<State> state_;  // the ncclComm_t (and a duplicate's stream), kept out of this header
  int64_t next_seq_ = 1;
  absl::Status failed_;
};

// This process's rank among the ranks of its node (MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED), for choosing its GPU. MPI must be initialised.
absl::StatusOr<int> MpiLocalRank();

}  // namespace gantry
