#include "worker/comm/nccl/nccl_communicator.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/tensor/cuda/cuda_memory.h"

namespace gantry {

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  // A duplicate's: the stream its all-reduces run on, the event that orders them after
  // the compute stream's work, and the device both belong to. Null / -1: the compute
  // stream's own communicator.
  cudaStream_t stream = nullptr;
  cudaEvent_t compute_done = nullptr;
  int device = -1;
};

namespace {

absl::Status NcclError(ncclResult_t result, absl::string_view what, ncclComm_t comm) {
  std::string detail = ncclGetErrorString(result);
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') absl::StrAppend(&detail, ": ", last);
  }
  return absl::InternalError(absl::StrCat(what, ": NCCL ", detail));
}

// Polls until `comm`'s pending work (init, or a collective whose completion `stream`
// reports when not null) is done, an error is reported, or the deadline passes (then
// returns DeadlineExceeded; the caller aborts). Yields between polls.
absl::Status PollUntil(ncclComm_t comm, cudaStream_t stream, absl::Time deadline, absl::string_view what) {
  while (true) {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(comm, &async);
    if (got != ncclSuccess) return NcclError(got, what, comm);
    if (async != ncclSuccess && async != ncclInProgress) return NcclError(async, what, comm);
    if (async == ncclSuccess) {
      if (stream == nullptr) return absl::OkStatus();
      const cudaError_t q = cudaStreamQuery(stream);
      if (q == cudaSuccess) return absl::OkStatus();
      if (q != cudaErrorNotReady) {
        return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorName(q), " (", cudaGetErrorString(q), ")"));
      }
    }
    if (absl::Now() > deadline) return absl::DeadlineExceededError(what);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

absl::Time DeadlineOf(const CommOptions& opts) { return absl::Now() + absl::Seconds(opts.timeout_seconds); }

}  // namespace

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(Communicator& host,
                                                                          const CommOptions& opts) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (host.rank() == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return NcclError(r, "ncclGetUniqueId", nullptr);
  }
  if (absl::Status s = host.Broadcast(&id, sizeof(id), 0, opts); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("broadcasting the NCCL unique id: ", s.message()));
  }
  auto state = std::make_unique<State>();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // init and collectives return at once; we poll against deadlines
  ncclResult_t r = ncclCommInitRankConfig(&state->comm, host.size(), id, host.rank(), &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    absl::Status error = NcclError(r, "ncclCommInitRankConfig", state->comm);
    if (state->comm != nullptr) ncclCommAbort(state->comm);  // a half-made communicator
    return error;
  }
  const std::string what = absl::StrCat("rank ", host.rank(), ": NCCL communicator init (", host.size(), " ranks)");
  if (absl::Status s = PollUntil(state->comm, nullptr, DeadlineOf(opts), what); !s.ok()) {
    ncclCommAbort(state->comm);
    if (absl::IsDeadlineExceeded(s)) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, " timed out after ", opts.timeout_seconds, " s (a rank did not join, or its GPU is stuck)"));
    }
    return s;
  }
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(host, std::move(state)));
}

NcclCommunicator::NcclCommunicator(Communicator& host, std::unique_ptr<State> state)
    : host_(host), state_(std::move(state)) {}

NcclCommunicator::~NcclCommunicator() {
  if (state_->device >= 0) cudaSetDevice(state_->device);  // a duplicate may die on another thread
  ReleaseDuplicateStream();
  if (state_->comm == nullptr) return;
  // After a failure the communicator was aborted already; otherwise a clean teardown.
  if (failed_.ok()) {
    ncclCommFinalize(state_->comm);
    // Destroy frees without blocking only once finalize has completed; a peer that never
    // gets there (still writing its checkpoint, or gone) must not hang this rank.
    if (PollUntil(state_->comm, nullptr, absl::Now() + absl::Seconds(10), "ncclCommFinalize").ok()) {
      ncclCommDestroy(state_->comm);
    } else {
      ncclCommAbort(state_->comm);
    }
  }
}

void NcclCommunicator::ReleaseDuplicateStream() {
  if (state_->compute_done != nullptr) cudaEventDestroy(state_->compute_done);
  if (state_->stream != nullptr) {
    cudaStreamSynchronize(state_->stream);  // after an abort its work has ended or been dropped
    cudaStreamDestroy(state_->stream);
  }
  state_->compute_done = nullptr;
  state_->stream = nullptr;
}

absl::StatusOr<std::unique_ptr<Communicator>> NcclCommunicator::Duplicate(const CommOptions& opts) {
  if (!failed_.ok()) return failed_;
  ASSIGN_OR_RETURN(std::unique_ptr<Communicator> host, host_.Duplicate(opts));
  auto state = std::make_unique<State>();
  const std::string what = absl::StrCat("rank ", rank(), ": NCCL communicator split for the overlapped exchange");
  if (cudaGetDevice(&state->device) != cudaSuccess) return absl::InternalError(absl::StrCat(what, ": no device"));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  // Collective on this communicator: every rank splits at the same point, all in colour 0.
  const ncclResult_t r = ncclCommSplit(state_->comm, /*color=*/0, rank(), &state->comm, &config);
  if (r != ncclSuccess && r != ncclInProgress) return NcclError(r, what, state->comm);
  if (absl::Status s = PollUntil(state->comm, nullptr, DeadlineOf(opts), what); !s.ok()) {
    ncclCommAbort(state->comm);
    return absl::IsDeadlineExceeded(s) ? absl::DeadlineExceededError(absl::StrCat(
                                             what, " timed out after ", opts.timeout_seconds, " s"))
                                       : s;
  }
  const cudaError_t stream = cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking);
  const cudaError_t event =
      stream == cudaSuccess ? cudaEventCreateWithFlags(&state->compute_done, cudaEventDisableTiming) : stream;
  auto duplicate = std::unique_ptr<NcclCommunicator>(new NcclCommunicator(*host, std::move(state)));
  duplicate->owned_host_ = std::move(host);
  if (event != cudaSuccess) {
    return absl::InternalError(absl::StrCat(what, ": creating its stream: ", cudaGetErrorName(event)));
  }
  return std::unique_ptr<Communicator>(std::move(duplicate));
}

absl::Status NcclCommunicator::AllReduceSum(float* data, int64_t count, const CommOptions& opts) {
  return AllReduce(data, count, false, opts);
}

absl::Status NcclCommunicator::AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) {
  return AllReduce(data, count, true, opts);
}

absl::Status NcclCommunicator::AllReduce(void* data, int64_t count, bool bf16, const CommOptions& opts) {
  if (count < 0 || (count > 0 && data == nullptr) || !(opts.timeout_seconds > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("all-reduce: count ", count, ", timeout ", opts.timeout_seconds));
  }
  if (!failed_.ok()) return failed_;
  const int64_t seq = next_seq_++;
  const std::string what = absl::StrCat("rank ", rank(), ": NCCL all-reduce #", seq, " of ", count,
                                        bf16 ? " bf16 values" : " floats");
  const absl::Time deadline = DeadlineOf(opts);
  // The host barrier names a rank that never comes (MpiCommunicator's arrival board).
  if (absl::Status s = host_.Barrier(opts); !s.ok()) {
    ncclCommAbort(state_->comm);
    failed_ = absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
    return failed_;
  }
  auto stream = static_cast<cudaStream_t>(cuda::ComputeStream());
  if (state_->stream != nullptr) {
    // A duplicate, perhaps on a thread of its own: its device, and its stream after the
    // compute stream's work so far (the gradients), not after what is queued later.
    cudaSetDevice(state_->device);
    const cudaError_t ordered = cudaEventRecord(state_->compute_done, stream) == cudaSuccess
                                    ? cudaStreamWaitEvent(state_->stream, state_->compute_done, 0)
                                    : cudaGetLastError();
    if (ordered != cudaSuccess) {
      ncclCommAbort(state_->comm);
      failed_ = absl::InternalError(absl::StrCat(what, ": ordering after the compute stream: ",
                                                 cudaGetErrorName(ordered)));
      return failed_;
    }
    stream = state_->stream;
  }
  const ncclResult_t r = ncclAllReduce(data, data, static_cast<size_t>(count), bf16 ? ncclBfloat16 : ncclFloat32,
                                       ncclSum, state_->comm, stream);
  absl::Status s = (r == ncclSuccess || r == ncclInProgress) ? PollUntil(state_->comm, stream, deadline, what)
                                                             : NcclError(r, what, state_->comm);
  if (s.ok()) return s;
  ncclCommAbort(state_->comm);
  if (absl::IsDeadlineExceeded(s)) {
    s = absl::DeadlineExceededError(absl::StrCat(what, " timed out after ", opts.timeout_seconds,
                                                 " s; every rank had arrived, so NCCL or a GPU stalled"));
  }
  failed_ = s;
  return failed_;
}

absl::Status NcclCommunicator::Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) {
  return host_.Broadcast(data, bytes, root, opts);
}

absl::Status NcclCommunicator::Gather(const void* send, int64_t bytes, void* recv, int root,
                                      const CommOptions& opts) {
  return host_.Gather(send, bytes, recv, root, opts);
}

absl::Status NcclCommunicator::Barrier(const CommOptions& opts) { return host_.Barrier(opts); }

absl::StatusOr<int> MpiLocalRank() {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    return absl::InternalError("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
  }
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

}  // namespace gantry
