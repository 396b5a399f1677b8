// All-reduce bandwidth under mpirun: gantry's MpiCommunicator::AllReduceSum next to a
// bare blocking MPI_Allreduce and a bare MPI_Iallreduce completed by the same deadline
// wait (WaitUntil) that gantry uses, so that the difference between the last two is
// the cost of gantry's own work: the arrival messages and the bookkeeping around them.
//
//   mpirun -np 2 gantry-bench-allreduce [--iters 21] [--warmup 3] [--sizes 2518337,...]
//   mpirun -np 2 --mca pml ob1 --mca btl self,tcp gantry-bench-allreduce
//
// Each iteration starts from a barrier and times one in-place all-reduce of float32 per
// variant (the variants interleaved, so a slow moment on a shared machine hits all of
// them); an iteration's time is the slowest rank's. Reported: the median over the
// iterations after warm-up; algbw = bytes / time; busbw = algbw * 2 (n - 1) / n (what
// each rank's link carries in a ring all-reduce, comparable across rank counts).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_wait.h"

namespace gantry {
namespace {

constexpr int64_t kDcganGradients = 2'518'337;
constexpr int kVariants = 3;  // MPI_Allreduce, MPI_Iallreduce + WaitUntil, AllReduceSum

struct Row {
  int64_t floats = 0;
  std::array<double, kVariants> seconds{};
};

void Check(bool ok, const char* what, MpiCommunicator& comm) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: %s failed\n", comm.rank(), what);
  comm.Abort(1);
}

double TimeOnce(int variant, std::vector<float>& data, MpiCommunicator& comm) {
  const int n = static_cast<int>(data.size());
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t start = Clock::Real().NowNanos();
  if (variant == 0) {
    Check(MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Allreduce", comm);
  } else if (variant == 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    Check(MPI_Iallreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request) ==
              MPI_SUCCESS,
          "MPI_Iallreduce", comm);
    const absl::StatusOr<bool> done =
        WaitUntil(&request, Clock::Real().NowNanos() + 60'000'000'000, OversubscribedByMpirun());
    Check(done.ok() && *done, "MPI_Iallreduce wait", comm);
  } else {
    Check(comm.AllReduceSum(data.data(), n, CommOptions{60}).ok(), "AllReduceSum", comm);
  }
  return static_cast<double>(Clock::Real().NowNanos() - start) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

Row Measure(int64_t floats, int warmup, int iters, MpiCommunicator& comm) {
  std::vector<float> source(static_cast<size_t>(floats));
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<float>((i * 7 + comm.rank()) % 1000) * 1e-3f;
  std::vector<float> data(source.size());
  std::array<std::vector<double>, kVariants> samples;
  for (int it = 0; it < warmup + iters; ++it) {
    std::array<double, kVariants> slowest{};
    for (int v = 0; v < kVariants; ++v) {
      std::memcpy(data.data(), source.data(), source.size() * sizeof(float));
      slowest[v] = TimeOnce(v, data, comm);
    }
    MPI_Allreduce(MPI_IN_PLACE, slowest.data(), kVariants, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it < warmup) continue;
    for (int v = 0; v < kVariants; ++v) samples[v].push_back(slowest[v]);
  }
  Row row{floats, {}};
  for (int v = 0; v < kVariants; ++v) row.seconds[v] = Median(samples[v]);
  return row;
}

void PrintTable(const std::vector<Row>& rows, int ranks, int iters) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::printf("all-reduce of float32, %d ranks, median of %d iterations (slowest rank), %.*s\n", ranks, iters,
              static_cast<int>(std::strcspn(version, "\n,")), version);
  std::printf("%10s %8s | %10s %8s | %10s | %10s %8s %8s | %9s %9s\n", "floats", "MB", "MPI_Allred", "busbw",
              "Iallred+wt", "gantry", "algbw", "busbw", "vs MPI_Al", "arrivals");
  std::printf("%10s %8s | %10s %8s | %10s | %10s %8s %8s | %9s %9s\n", "", "", "us", "GB/s", "us", "us",
              "GB/s", "GB/s", "%", "%");
  const double bus = 2.0 * (ranks - 1) / ranks;
  for (const Row& r : rows) {
    const double bytes = static_cast<double>(r.floats) * sizeof(float);
    const auto& [blocking, bare, gantry] = r.seconds;
    std::printf("%10lld %8.3f | %10.1f %8.2f | %10.1f | %10.1f %8.2f %8.2f | %+9.1f %+9.1f\n",
                static_cast<long long>(r.floats), bytes / 1e6, blocking * 1e6, bytes / blocking / 1e9 * bus,
                bare * 1e6, gantry * 1e6, bytes / gantry / 1e9, bytes / gantry / 1e9 * bus,
                100 * (gantry / blocking - 1), 100 * (gantry / bare - 1));
  }
}

int Main(int argc, char** argv) {
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> comm = MpiCommunicator::Create(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "gantry-bench-allreduce: %s\n", comm.status().ToString().c_str());
    return 2;
  }
  CLI::App app("All-reduce time and bandwidth: gantry's AllReduceSum vs bare MPI (run under mpirun)");
  int iters = 21, warmup = 3;
  int64_t max_floats = int64_t{1} << 24;
  app.add_option("--iters", iters, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed iterations per size first")->check(CLI::NonNegativeNumber);
  std::vector<int64_t> sizes;
  app.add_option("--max-floats", max_floats, "largest size (sizes run 1K, 4K, ... up to it)")
      ->check(CLI::PositiveNumber);
  app.add_option("--sizes", sizes, "exact sizes in floats instead (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{2147483647}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return (*comm)->rank() == 0 ? app.exit(e) : e.get_exit_code();  // every rank parses the same arguments
  }
  if (sizes.empty()) {
    for (int64_t n = 1024; n <= max_floats; n *= 4) sizes.push_back(n);
    if (kDcganGradients <= max_floats) sizes.push_back(kDcganGradients);
    std::sort(sizes.begin(), sizes.end());
  }
  std::vector<Row> rows;
  for (int64_t n : sizes) rows.push_back(Measure(n, warmup, iters, **comm));
  if ((*comm)->rank() == 0) PrintTable(rows, (*comm)->size(), iters);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) { return gantry::Main(argc, argv); }
