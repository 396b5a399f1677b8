#include "worker/comm/mpi_communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "worker/comm/mpi_bf16_sum.h"
#include "worker/comm/mpi_wait.h"

namespace gantry {
namespace {

constexpr double kSettleSeconds = 10;
constexpr double kRankZeroGraceSeconds = 1;

// All-reduces run in pieces, two in flight (see the header). The ring cuts each piece into
// one segment per rank: 64 Ki values (256 KB of fp32) per segment.
constexpr int64_t kSegmentValues = int64_t{1} << 16;
constexpr int kPiecesInFlight = 2;

int64_t PieceValues(int ranks) { return kSegmentValues * std::max(2, ranks); }

// How many pieces an all-reduce of `count` values takes over `ranks` (one, for zero values).
int64_t PiecesOf(int64_t count, int ranks) {
  return std::max<int64_t>(1, (count + PieceValues(ranks) - 1) / PieceValues(ranks));
}

// Piece `piece`'s first value and value count.
std::pair<int64_t, int> PieceRange(int64_t count, int ranks, int64_t piece) {
  const int64_t begin = piece * PieceValues(ranks);
  return {begin, static_cast<int>(std::min(PieceValues(ranks), count - begin))};
}

int64_t DeadlineAfter(double seconds) {
  // Clamped so that an absurd (but finite) timeout cannot overflow the nanosecond count.
  return Clock::Real().NowNanos() + static_cast<int64_t>(std::min(seconds, 1e9) * 1e9);
}

absl::StatusOr<MPI_Comm> DuplicateOf(MPI_Comm parent, const CommOptions& opts) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  RETURN_IF_ERROR(MpiStatus(MPI_Comm_idup(parent, &comm, &request), "MPI_Comm_idup"));
  ASSIGN_OR_RETURN(const bool done,
                   WaitUntil(&request, DeadlineAfter(opts.timeout_seconds), OversubscribedByMpirun()));
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat("duplicating an MPI communicator timed out after ",
                                                    opts.timeout_seconds, " s (did every rank start?)"));
  }
  return comm;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create(int* argc, char*** argv) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized || finalized) {
    return absl::FailedPreconditionError(
        "MPI was already initialized in this process; create one MpiCommunicator");
  }
  // MPI_THREAD_MULTIPLE lets a Duplicate run on the overlapped exchange's thread; this
  // communicator itself needs only FUNNELED.
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return absl::UnavailableError("MPI_Init_thread failed (start the job with mpirun)");
  }
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return absl::FailedPreconditionError(
        absl::StrCat("MPI offers thread level ", provided, ", below MPI_THREAD_FUNNELED"));
  }
  // Errors come back as codes (and then as Status) instead of aborting the job; the
  // duplicates below inherit this handler.
  RETURN_IF_ERROR(
      MpiStatus(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler"));
  ASSIGN_OR_RETURN(MPI_Comm comm, DuplicateOf(MPI_COMM_WORLD, CommOptions{}));
  ASSIGN_OR_RETURN(MPI_Comm arrival_comm, DuplicateOf(MPI_COMM_WORLD, CommOptions{}));
  ASSIGN_OR_RETURN(std::unique_ptr<ArrivalBoard> arrivals, ArrivalBoard::Create(arrival_comm));
  ASSIGN_OR_RETURN(MPI_Op bf16_sum, CreateBf16SumOp());
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(comm, arrival_comm, std::move(arrivals), bf16_sum,
                                                              provided, /*owns_mpi=*/true));
}

absl::StatusOr<std::unique_ptr<Communicator>> MpiCommunicator::Duplicate(const CommOptions& opts) {
  CHECK(std::this_thread::get_id() == owner_) << "MpiCommunicator used off the thread that created it";
  if (thread_level_ < MPI_THREAD_MULTIPLE) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank_, ": this Open MPI offers thread level ", thread_level_,
        ", below MPI_THREAD_MULTIPLE, so collectives cannot run from a second thread (use --overlap off)"));
  }
  if (!failed_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank_, ": cannot duplicate a communicator that failed: ", failed_.message()));
  }
  ASSIGN_OR_RETURN(MPI_Comm comm, DuplicateOf(comm_, opts));
  ASSIGN_OR_RETURN(MPI_Comm arrival_comm, DuplicateOf(comm_, opts));
  ASSIGN_OR_RETURN(std::unique_ptr<ArrivalBoard> arrivals, ArrivalBoard::Create(arrival_comm));
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, arrival_comm, std::move(arrivals), bf16_sum_,
                                                           thread_level_, /*owns_mpi=*/false));
}

bool MpiCommunicator::LaunchedUnderMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, MPI_Comm arrival_comm, std::unique_ptr<ArrivalBoard> arrivals,
                                 MPI_Op bf16_sum, int thread_level, bool owns_mpi)
    : comm_(comm),
      arrival_comm_(arrival_comm),
      arrivals_(std::move(arrivals)),
      bf16_sum_(bf16_sum),
      thread_level_(thread_level),
      owns_mpi_(owns_mpi),
      owner_(owns_mpi ? std::this_thread::get_id() : std::thread::id()) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  if (failed_.ok()) {
    // A duplicate skips the barrier (its thread is gone; the world's own barrier follows).
    absl::Status status = owns_mpi_ ? Barrier(CommOptions{}) : absl::OkStatus();
    if (status.ok()) {
      absl::StatusOr<bool> settled = arrivals_->Settle(next_seq_ - 1, DeadlineAfter(kSettleSeconds));
      if (!settled.ok()) {
        status = settled.status();
      } else if (!*settled) {
        status = absl::DeadlineExceededError(
            absl::StrCat("rank ", rank_, ": arrival messages still in flight after ", kSettleSeconds, " s"));
      }
    }
    failed_ = status;
  }
  if (!failed_.ok()) {
    std::fprintf(stderr, "rank %d: leaving MPI unfinalized after a failure: %s\n", rank_,
                 std::string(failed_.message()).c_str());
    return;
  }
  arrivals_.reset();
  MPI_Comm_free(&arrival_comm_);
  MPI_Comm_free(&comm_);
  if (!owns_mpi_) return;  // the world's communicator frees the shared op and finalizes
  MPI_Op_free(&bf16_sum_);
  MPI_Finalize();
}

template <typename Start>
absl::Status MpiCommunicator::Run(CollectiveCall call, const CommOptions& opts, const char* what, int64_t pieces,
                                  Start start) {
  // A duplicate belongs to the first thread that runs a collective on it.
  if (owner_ == std::thread::id()) owner_ = std::this_thread::get_id();
  CHECK(std::this_thread::get_id() == owner_) << "MpiCommunicator used off the thread that owns it";
  CHECK_GE(pieces, 1);
  if (!failed_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank_, ": ", Describe(call),
                     " refused: the communicator failed earlier: ", failed_.message()));
  }
  ++next_seq_;
  const int64_t deadline = DeadlineAfter(opts.timeout_seconds);
  RETURN_IF_ERROR(Fail(arrivals_->Announce(call.seq)));
  // A ring of the pieces in flight: piece i's request sits in slot i % kPiecesInFlight.
  MPI_Request in_flight[kPiecesInFlight];
  int64_t posted = 0;
  for (int64_t waited = 0; waited < pieces; ++waited) {
    for (; posted < pieces && posted < waited + kPiecesInFlight; ++posted) {
      MPI_Request* request = &in_flight[posted % kPiecesInFlight];
      *request = MPI_REQUEST_NULL;
      if (const int code = start(posted, request); code != MPI_SUCCESS) {
        return Fail(MpiStatus(code, absl::StrCat("rank ", rank_, ": ", what, " for ", Describe(call))));
      }
    }
    MPI_Request* request = &in_flight[waited % kPiecesInFlight];
    absl::StatusOr<bool> done = WaitUntil(request, deadline, yield_, opts.background);
    if (done.ok() && !*done) done = GraceForRankZero(request, call.seq, opts);
    if (!done.ok()) {
      return Fail(absl::Status(done.status().code(), absl::StrCat("rank ", rank_, ": ", Describe(call), ": ",
                                                                  done.status().message())));
    }
    RETURN_IF_ERROR(Fail(arrivals_->Poll()));
    if (!*done) return Fail(TimeoutError(rank_, call, opts.timeout_seconds, Diagnose(call.seq)));
  }
  return absl::OkStatus();
}

absl::Status MpiCommunicator::AllReduceSum(float* data, int64_t count, const CommOptions& opts) {
  const CollectiveCall call{CollectiveKind::kAllReduce, next_seq_, count, -1};
  RETURN_IF_ERROR(ValidateCall(rank_, size_, call, data, nullptr, opts));
  return Run(call, opts, "MPI_Iallreduce", PiecesOf(count, size_), [&](int64_t piece, MPI_Request* request) {
    const auto [begin, n] = PieceRange(count, size_, piece);
    return MPI_Iallreduce(MPI_IN_PLACE, data + begin, n, MPI_FLOAT, MPI_SUM, comm_, request);
  });
}

absl::Status MpiCommunicator::AllReduceSumBf16(uint16_t* data, int64_t count, const CommOptions& opts) {
  const CollectiveCall call{CollectiveKind::kAllReduceBf16, next_seq_, count, -1};
  RETURN_IF_ERROR(ValidateCall(rank_, size_, call, data, nullptr, opts));
  return Run(call, opts, "MPI_Iallreduce", PiecesOf(count, size_), [&](int64_t piece, MPI_Request* request) {
    const auto [begin, n] = PieceRange(count, size_, piece);
    return MPI_Iallreduce(MPI_IN_PLACE, data + begin, n, Bf16WireDatatype(), bf16_sum_, comm_, request);
  });
}

absl::Status MpiCommunicator::Broadcast(void* data, int64_t bytes, int root, const CommOptions& opts) {
  const CollectiveCall call{CollectiveKind::kBroadcast, next_seq_, bytes, root};
  RETURN_IF_ERROR(ValidateCall(rank_, size_, call, data, nullptr, opts));
  return Run(call, opts, "MPI_Ibcast", 1, [&](int64_t, MPI_Request* request) {
    return MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_, request);
  });
}

absl::Status MpiCommunicator::Gather(const void* send, int64_t bytes, void* recv, int root,
                                     const CommOptions& opts) {
  const CollectiveCall call{CollectiveKind::kGather, next_seq_, bytes, root};
  RETURN_IF_ERROR(ValidateCall(rank_, size_, call, send, recv, opts));
  // MPI forbids a root's send buffer to overlap its receive buffer unless it says so.
  const bool in_place = rank_ == root && bytes > 0 && send == static_cast<const char*>(recv) + root * bytes;
  return Run(call, opts, "MPI_Igather", 1, [&](int64_t, MPI_Request* request) {
    const int n = static_cast<int>(bytes);
    return MPI_Igather(in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n, MPI_BYTE, root, comm_, request);
  });
}

absl::Status MpiCommunicator::Barrier(const CommOptions& opts) {
  const CollectiveCall call{CollectiveKind::kBarrier, next_seq_, 0, -1};
  RETURN_IF_ERROR(ValidateCall(rank_, size_, call, nullptr, nullptr, opts));
  return Run(call, opts, "MPI_Ibarrier", 1, [&](int64_t, MPI_Request* request) { return MPI_Ibarrier(comm_, request); });
}

void MpiCommunicator::Abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it ever does.
}

absl::StatusOr<bool> MpiCommunicator::GraceForRankZero(MPI_Request* request, int64_t seq,
                                                       const CommOptions& opts) {
  RETURN_IF_ERROR(arrivals_->Poll());
  if (rank_ == 0 || size_ <= 2 || !arrivals_->NotArrived(seq).empty()) return false;
  // Rank 0 arrived, so it is waiting too and will time out at about the same moment, with
  // an error that names the missing ranks (this rank can't). Waiting a little longer lets
  // that error be the one that ends the job.
  return WaitUntil(request, DeadlineAfter(std::min(kRankZeroGraceSeconds, opts.timeout_seconds / 4)), yield_);
}

std::string MpiCommunicator::Diagnose(int64_t seq) const {
  const std::vector<int> missing = arrivals_->NotArrived(seq);
  if (!missing.empty()) return DidNotArrive(missing);
  if (rank_ == 0 || size_ <= 2) {
    return "every rank arrived, yet it did not complete (mismatched collectives or a transport fault?)";
  }
  return "rank 0 arrived; rank 0's error names the ranks that did not";
}

absl::Status MpiCommunicator::Fail(absl::Status status) {
  if (!status.ok() && failed_.ok()) failed_ = status;
  return status;
}

}  // namespace gantry
