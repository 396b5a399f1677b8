// MpiCommunicator under a real `mpirun -np N` (N >= 2); not a gtest binary, since every
// rank runs it. Exits 0 after printing "all checks passed" on rank 0; any failed check
// prints what failed and aborts the whole job (so mpirun exits non-zero).
//
//   mpi_collectives_check                      sums (fp32, bf16), bit-identity, broadcast,
//                                              gather, barrier
//   mpi_collectives_check --stuck-rank R [bf16]  rank R sleeps past a 1 s all-reduce (of
//                                              bf16 values with "bf16") timeout: the others
//                                              print the DeadlineExceeded and abort
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr int64_t kDcganGradients = 2'518'337;

class Checker {
 public:
  explicit Checker(MpiCommunicator& comm) : comm_(comm) {}

  void Expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", comm_.rank(), what.c_str());
    std::fflush(stderr);
    comm_.Abort(1);
  }
  void Ok(const absl::Status& status) { Expect(status.ok(), status.ToString()); }

 private:
  MpiCommunicator& comm_;
};

// Values spread over many binades, so that summing in another order changes bits.
std::vector<float> RankInput(int rank, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  Rng rng(1000 + rank);
  for (float& x : v)
    x = static_cast<float>((rng.Uniform() - 0.5) * std::ldexp(1.0, static_cast<int>(rng.Below(40)) - 20));
  return v;
}

uint64_t Fnv1a(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

void CheckExactIntegerSum(MpiCommunicator& comm, Checker& check) {
  const int64_t n = 1000;
  std::vector<float> data(n);
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(comm.rank() * n + i);
  check.Ok(comm.AllReduceSum(data.data(), n, {}));
  const int64_t p = comm.size();
  for (int64_t i = 0; i < n; ++i) {
    const float expected = static_cast<float>(n * p * (p - 1) / 2 + p * i);
    check.Expect(data[i] == expected, absl::StrCat("sum[", i, "] = ", data[i], ", expected ", expected));
  }
}

// Sums wide-ranging values, then compares a checksum of the result across ranks. Returns
// whether the result also equals the rank-order sum bit for bit (for the report only).
bool CheckBitIdenticalSum(MpiCommunicator& comm, Checker& check, int64_t count) {
  std::vector<float> data = RankInput(comm.rank(), count);
  check.Ok(comm.AllReduceSum(data.data(), count, {}));
  std::vector<float> rank_order = RankInput(0, count);
  std::vector<double> magnitude(rank_order.begin(), rank_order.end());
  for (double& m : magnitude) m = std::fabs(m);
  for (int r = 1; r < comm.size(); ++r) {
    const std::vector<float> in = RankInput(r, count);
    for (int64_t i = 0; i < count; ++i) {
      rank_order[i] += in[i];
      magnitude[i] += std::fabs(in[i]);
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    // Each of the two summation orders is within (size - 1) unit roundoffs of the sum of
    // magnitudes from the exact sum.
    const double tolerance = 2 * comm.size() * 0x1p-24 * magnitude[i];
    check.Expect(std::fabs(static_cast<double>(data[i]) - rank_order[i]) <= tolerance,
                 absl::StrFormat("count %d: sum[%d] = %.9g, expected %.9g within %.3g", count, i, data[i],
                                 rank_order[i], tolerance));
  }
  const uint64_t mine = Fnv1a(data.data(), data.size() * sizeof(float));
  std::vector<uint64_t> all(comm.size());
  check.Ok(comm.Gather(&mine, sizeof(mine), all.data(), 0, {}));
  if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r) {
      check.Expect(all[r] == all[0],
                   absl::StrCat("count ", count, ": rank ", r, "'s all-reduce result differs from rank 0's"));
    }
  }
  return std::memcmp(data.data(), rank_order.data(), data.size() * sizeof(float)) == 0;
}

// The bf16 all-reduce: the same bytes on every rank; at 2 ranks exactly the pair sum
// (one fp32 addition, one rounding), the bits LocalGroup gives. Returns whether the
// result equals the rank-order pair sum (always at 2 ranks; for the report beyond).
bool CheckBf16Sum(MpiCommunicator& comm, Checker& check, int64_t count) {
  auto wire = [count](int rank) {
    const std::vector<float> v = RankInput(rank, count);
    std::vector<uint16_t> w(v.size());
    ToWireBf16(v.data(), w.data(), count);
    return w;
  };
  std::vector<uint16_t> data = wire(comm.rank());
  check.Ok(comm.AllReduceSumBf16(data.data(), count, {}));
  std::vector<uint16_t> rank_order = wire(0);
  for (int r = 1; r < comm.size(); ++r) SumBf16Into(wire(r).data(), rank_order.data(), count);
  const bool same_as_rank_order = data == rank_order;
  if (comm.size() == 2) {
    check.Expect(same_as_rank_order, absl::StrCat("count ", count, ": bf16 sum is not the pair sum"));
  }
  const uint64_t mine = Fnv1a(data.data(), data.size() * sizeof(uint16_t));
  std::vector<uint64_t> all(comm.size());
  check.Ok(comm.Gather(&mine, sizeof(mine), all.data(), 0, {}));
  for (int r = 1; comm.rank() == 0 && r < comm.size(); ++r) {
    check.Expect(all[r] == all[0], absl::StrCat("count ", count, ": rank ", r, "'s bf16 all-reduce differs"));
  }
  return same_as_rank_order;
}

void CheckBf16ExactAndInfinite(MpiCommunicator& comm, Checker& check) {
  std::vector<uint16_t> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = WireBf16(static_cast<float>(i % 50 + comm.rank()));
  if (comm.rank() == comm.size() - 1) data[99] = WireBf16(INFINITY);  // one rank's overflow reaches all
  check.Ok(comm.AllReduceSumBf16(data.data(), 100, {}));
  const int p = comm.size();
  for (size_t i = 0; i < 99; ++i) {
    const float want = static_cast<float>(p * (i % 50) + p * (p - 1) / 2);
    check.Expect(Bf16ToFloat(data[i]) == want, absl::StrCat("bf16 sum[", i, "] = ", Bf16ToFloat(data[i])));
  }
  check.Expect(data[99] == 0x7f80, "an infinity on one rank did not reach every rank");
}

void CheckBroadcast(MpiCommunicator& comm, Checker& check, int root) {
  std::vector<uint32_t> data(1 << 18);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = comm.rank() == root ? static_cast<uint32_t>(i * 2654435761u) : 0;
  check.Ok(comm.Broadcast(data.data(), static_cast<int64_t>(data.size() * 4), root, {}));
  for (size_t i = 0; i < data.size(); ++i) {
    check.Expect(data[i] == static_cast<uint32_t>(i * 2654435761u),
                 absl::StrCat("broadcast from ", root, ": word ", i));
  }
}

void CheckGather(MpiCommunicator& comm, Checker& check, int root) {
  std::vector<int64_t> all(2 * comm.size(), -1);
  const int64_t mine[2] = {comm.rank(), 100 * comm.rank() + root};
  check.Ok(comm.Gather(mine, sizeof(mine), comm.rank() == root ? all.data() : nullptr, root, {}));
  // Again with the root's contribution already in place in the receive buffer.
  std::vector<int64_t> in_place(2 * comm.size(), -1);
  std::memcpy(&in_place[2 * comm.rank()], mine, sizeof(mine));
  check.Ok(comm.Gather(&in_place[2 * comm.rank()], sizeof(mine), in_place.data(), root, {}));
  if (comm.rank() != root) return;
  for (int r = 0; r < comm.size(); ++r) {
    for (const auto& v : {all, in_place}) {
      check.Expect(v[2 * r] == r && v[2 * r + 1] == 100 * r + root,
                   absl::StrCat("gather to ", root, ": rank ", r));
    }
  }
}

int RunChecks(MpiCommunicator& comm) {
  Checker check(comm);
  check.Expect(comm.size() >= 2, "run under mpirun -np 2 (or more)");
  check.Expect(comm.backend_name() == "mpi", "backend_name");
  check.Expect(!comm.ranks_share_a_process(), "ranks_share_a_process");
  CheckExactIntegerSum(comm, check);
  std::string order;
  // 131072 values is one all-reduce piece at 2 ranks (mpi_communicator.h): one piece
  // exactly, one more value, and several pieces with a short last one.
  for (const int64_t count : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{65539}, int64_t{131072},
                              int64_t{131073}, int64_t{3 * 131072 + 5}, kDcganGradients}) {
    order += absl::StrCat(" ", count, ":", CheckBitIdenticalSum(comm, check, count) ? "yes" : "no");
  }
  std::string bf16_order;
  for (const int64_t count : {int64_t{1}, int64_t{7}, int64_t{65539}, int64_t{131073}, kDcganGradients}) {
    bf16_order += absl::StrCat(" ", count, ":", CheckBf16Sum(comm, check, count) ? "yes" : "no");
  }
  CheckBf16ExactAndInfinite(comm, check);
  CheckBroadcast(comm, check, 0);
  CheckBroadcast(comm, check, comm.size() - 1);
  CheckGather(comm, check, 0);
  CheckGather(comm, check, comm.size() - 1);
  check.Ok(comm.Barrier({}));
  if (comm.rank() == 0) {
    std::printf(
        "mpi_collectives_check: all-reduce results bit-identical on all ranks; equal to the rank-order sum "
        "(count:yes/no):%s\n",
        order.c_str());
    std::printf(
        "mpi_collectives_check: bf16 all-reduce results bit-identical on all ranks; equal to the rank-order pair "
        "sum (count:yes/no):%s\n",
        bf16_order.c_str());
    std::printf("mpi_collectives_check: all checks passed on %d ranks\n", comm.size());
  }
  return 0;
}

[[noreturn]] void RunStuckRank(MpiCommunicator& comm, int stuck, bool bf16) {
  Checker check(comm);
  check.Ok(comm.Barrier({}));
  std::vector<float> data(kDcganGradients, 1.0f);
  std::vector<uint16_t> wire(kDcganGradients, 0x3f80);
  if (comm.rank() == stuck) std::this_thread::sleep_for(std::chrono::seconds(30));
  const absl::Status status = bf16 ? comm.AllReduceSumBf16(wire.data(), kDcganGradients, CommOptions{1})
                                   : comm.AllReduceSum(data.data(), kDcganGradients, CommOptions{1});
  if (status.ok()) {
    std::fprintf(stderr, "rank %d: all-reduce completed although rank %d was stuck\n", comm.rank(), stuck);
  } else {
    std::fprintf(stderr, "mpi_collectives_check: %s\n", status.ToString().c_str());
  }
  std::fflush(stderr);
  comm.Abort(3);
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  gantry::PreferRingNonBlockingAllReduce();
  absl::StatusOr<std::unique_ptr<gantry::MpiCommunicator>> comm =
      gantry::MpiCommunicator::Create(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "mpi_collectives_check: %s\n", comm.status().ToString().c_str());
    return 2;
  }
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--stuck-rank") {
    gantry::RunStuckRank(**comm, std::atoi(argv[2]), argc == 4 && std::string(argv[3]) == "bf16");
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: mpi_collectives_check [--stuck-rank R [bf16]]\n");
    (*comm)->Abort(2);
  }
  return gantry::RunChecks(**comm);
}
