// All-reduce bandwidth under mpirun: gantry's MpiCommunicator all-reduce next to a bare
// blocking MPI_Allreduce and a bare MPI_Iallreduce completed by the same deadline wait
// (WaitUntil) that gantry uses. gantry's all-reduce runs the same MPI_Iallreduce in pieces,
// two in flight (mpi_communicator.h), so the difference between the last two is what the
// pieces gain, net of gantry's own work (the arrival messages and the bookkeeping).
//
//   mpirun -np 2 gantry-bench-allreduce [--dtype fp32|bf16] [--iters 21] [--warmup 3]
//                                       [--sizes 2518337,...]
//   mpirun -np 2 --mca pml ob1 --mca btl self,tcp gantry-bench-allreduce ...
//
// --dtype bf16 times AllReduceSumBf16 and gives the bare MPI calls the same user MPI_Op
// (fp32 pair sums rounded to bf16, mpi_bf16_sum.h) on MPI_UINT16_T. It adds a column for
// what a training step pays with a bf16 wire: rounding the fp32 gradient to bf16, the
// all-reduce, and the fused conversion back with unscale and inf/NaN check.
//
// Each iteration starts from a barrier and times one in-place all-reduce per variant (the
// variants interleaved, so a slow moment on a shared machine hits all of them); an
// iteration's time is the slowest rank's. Reported: the median over the iterations after
// warm-up; algbw = bytes on the wire / time; busbw = algbw * 2 (n - 1) / n (what each
// rank's link carries in a ring all-reduce, comparable across rank counts).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/comm/mpi_bf16_sum.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"
#include "worker/comm/mpi_wait.h"
#include "worker/tensor/cpu/gradient_unscale.h"

namespace gantry {
namespace {

constexpr int64_t kDcganGradients = 2'518'337;
// MPI_Allreduce, MPI_Iallreduce + WaitUntil, gantry, gantry with conversions (bf16 only).
constexpr int kVariants = 4;

struct Row {
  int64_t count = 0;
  std::array<double, kVariants> seconds{};
};

// One size's buffers: the fp32 gradient and its wire form, each with a pristine copy.
struct Buffers {
  std::vector<float> source, f32;
  std::vector<uint16_t> wire_source, wire;
};

class Bench {
 public:
  Bench(MpiCommunicator& comm, bool bf16, MPI_Op bf16_sum) : comm_(comm), bf16_(bf16), bf16_sum_(bf16_sum) {}

  int variants() const { return bf16_ ? 4 : 3; }
  Row Measure(int64_t count, int warmup, int iters);

 private:
  void Check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: %s failed\n", comm_.rank(), what);
    comm_.Abort(1);
  }
  double TimeOnce(int variant, Buffers& b);
  void Bare(int variant, void* data, int n);

  MpiCommunicator& comm_;
  bool bf16_;
  MPI_Op bf16_sum_;
};

void Bench::Bare(int variant, void* data, int n) {
  const MPI_Datatype type = bf16_ ? Bf16WireDatatype() : MPI_FLOAT;
  const MPI_Op op = bf16_ ? bf16_sum_ : MPI_SUM;
  if (variant == 0) {
    Check(MPI_Allreduce(MPI_IN_PLACE, data, n, type, op, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Allreduce");
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  Check(MPI_Iallreduce(MPI_IN_PLACE, data, n, type, op, MPI_COMM_WORLD, &request) == MPI_SUCCESS, "MPI_Iallreduce");
  const absl::StatusOr<bool> done =
      WaitUntil(&request, Clock::Real().NowNanos() + 60'000'000'000, OversubscribedByMpirun());
  Check(done.ok() && *done, "MPI_Iallreduce wait");
}

double Bench::TimeOnce(int variant, Buffers& b) {
  const int64_t n = static_cast<int64_t>(b.source.size());
  std::memcpy(b.f32.data(), b.source.data(), b.f32.size() * sizeof(float));
  std::memcpy(b.wire.data(), b.wire_source.data(), b.wire.size() * sizeof(uint16_t));
  void* data = bf16_ ? static_cast<void*>(b.wire.data()) : static_cast<void*>(b.f32.data());
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t start = Clock::Real().NowNanos();
  if (variant < 2) {
    Bare(variant, data, static_cast<int>(n));
  } else if (!bf16_) {
    Check(comm_.AllReduceSum(b.f32.data(), n, CommOptions{60}).ok(), "AllReduceSum");
  } else if (variant == 2) {
    Check(comm_.AllReduceSumBf16(b.wire.data(), n, CommOptions{60}).ok(), "AllReduceSumBf16");
  } else {
    ToWireBf16(b.f32.data(), b.wire.data(), n);
    Check(comm_.AllReduceSumBf16(b.wire.data(), n, CommOptions{60}).ok(), "AllReduceSumBf16");
    Check(UnscaleFromBf16AndCheckFinite(b.wire.data(), b.f32.data(), n, 0x1p-16f), "finite gradients");
  }
  return static_cast<double>(Clock::Real().NowNanos() - start) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

Row Bench::Measure(int64_t count, int warmup, int iters) {
  Buffers b;
  b.source.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < b.source.size(); ++i) {
    b.source[i] = static_cast<float>((i * 7 + comm_.rank()) % 1000) * 1e-3f;
  }
  b.f32.resize(b.source.size());
  b.wire_source.resize(b.source.size());
  b.wire.resize(b.source.size());
  ToWireBf16(b.source.data(), b.wire_source.data(), count);
  std::array<std::vector<double>, kVariants> samples;
  for (int it = 0; it < warmup + iters; ++it) {
    std::array<double, kVariants> slowest{};
    for (int v = 0; v < variants(); ++v) slowest[v] = TimeOnce(v, b);
    MPI_Allreduce(MPI_IN_PLACE, slowest.data(), kVariants, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it < warmup) continue;
    for (int v = 0; v < variants(); ++v) samples[v].push_back(slowest[v]);
  }
  Row row{count, {}};
  for (int v = 0; v < variants(); ++v) row.seconds[v] = Median(samples[v]);
  return row;
}

void PrintTable(const std::vector<Row>& rows, int ranks, int iters, bool bf16) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::printf("all-reduce of %s, %d ranks, median of %d iterations (slowest rank), %.*s\n",
              bf16 ? "bf16 (fp32 pair sums, user MPI_Op)" : "float32", ranks, iters,
              static_cast<int>(std::strcspn(version, "\n,")), version);
  std::printf("%10s %8s | %10s %8s | %10s | %10s %8s %8s | %9s %9s%s\n", "values", "MB", "MPI_Allred", "busbw",
              "Iallred+wt", "gantry", "algbw", "busbw", "vs MPI_Al", "arrivals", bf16 ? " | +convert" : "");
  std::printf("%10s %8s | %10s %8s | %10s | %10s %8s %8s | %9s %9s%s\n", "", "", "us", "GB/s", "us", "us", "GB/s",
              "GB/s", "%", "%", bf16 ? " |         us" : "");
  const double bus = 2.0 * (ranks - 1) / ranks;
  for (const Row& r : rows) {
    const double bytes = static_cast<double>(r.count) * (bf16 ? 2 : 4);
    const double blocking = r.seconds[0], bare = r.seconds[1], gantry = r.seconds[2];
    std::printf("%10lld %8.3f | %10.1f %8.2f | %10.1f | %10.1f %8.2f %8.2f | %+9.1f %+9.1f",
                static_cast<long long>(r.count), bytes / 1e6, blocking * 1e6, bytes / blocking / 1e9 * bus, bare * 1e6, gantry * 1e6,
                bytes / gantry / 1e9, bytes / gantry / 1e9 * bus, 100 * (gantry / blocking - 1),
                100 * (gantry / bare - 1));
    if (bf16) std::printf(" | %10.1f", r.seconds[3] * 1e6);
    std::printf("\n");
  }
}

int Main(int argc, char** argv) {
  gantry::PreferRingNonBlockingAllReduce();
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> comm = MpiCommunicator::Create(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "gantry-bench-allreduce: %s\n", comm.status().ToString().c_str());
    return 2;
  }
  CLI::App app("All-reduce time and bandwidth: gantry's all-reduce vs bare MPI (run under mpirun)");
  int iters = 21, warmup = 3;
  int64_t max_count = int64_t{1} << 24;
  std::string dtype = "fp32";
  app.add_option("--dtype", dtype, "values on the wire: fp32 | bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  app.add_option("--iters", iters, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed iterations per size first")->check(CLI::NonNegativeNumber);
  std::vector<int64_t> sizes;
  app.add_option("--max-floats", max_count, "largest size in values (sizes run 1K, 4K, ... up to it)")
      ->check(CLI::PositiveNumber);
  app.add_option("--sizes", sizes, "exact sizes in values instead (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{2147483647}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return (*comm)->rank() == 0 ? app.exit(e) : e.get_exit_code();  // every rank parses the same arguments
  }
  if (sizes.empty()) {
    for (int64_t n = 1024; n <= max_count; n *= 4) sizes.push_back(n);
    if (kDcganGradients <= max_count) sizes.push_back(kDcganGradients);
    std::sort(sizes.begin(), sizes.end());
  }
  const bool bf16 = dtype == "bf16";
  absl::StatusOr<MPI_Op> op = CreateBf16SumOp();
  if (!op.ok()) {
    std::fprintf(stderr, "gantry-bench-allreduce: %s\n", op.status().ToString().c_str());
    (*comm)->Abort(2);
  }
  Bench bench(**comm, bf16, *op);
  std::vector<Row> rows;
  for (int64_t n : sizes) rows.push_back(bench.Measure(n, warmup, iters));
  if ((*comm)->rank() == 0) PrintTable(rows, (*comm)->size(), iters, bf16);
  MPI_Op_free(&*op);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) { return gantry::Main(argc, argv); }
