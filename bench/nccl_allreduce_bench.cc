// NCCL all-reduce bandwidth of gantry's NcclCommunicator on GPU buffers, under mpirun
// with one GPU per rank (CUDA builds: gantry-bench-nccl).
//
//   mpirun -np 2 build/bin/gantry-bench-nccl [--dtype fp32|bf16] [--iters 21] [--warmup 3]
//                                            [--sizes 2518337,...]
//
// Each iteration starts from a host barrier and times one in-place AllReduceSum (or
// AllReduceSumBf16) of device memory until it has finished on the GPU; that includes
// the communicator's own host barrier (its timeout-not-hang rule, see
// nccl_communicator.h), which is what a training step pays. An iteration's time is the
// slowest rank's; reported is the median after warm-up, algbw = bytes / time and
// busbw = algbw * 2 (n - 1) / n, as nccl-tests define them.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"
#include "worker/comm/nccl/nccl_communicator.h"
#include "worker/tensor/cuda/cuda_backend.h"
#include "worker/tensor/cuda/cuda_device.h"
#include "worker/tensor/tensor.h"

namespace gantry {
namespace {

constexpr int64_t kDcganGradients = 2'518'337;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int Fail(int rank, const absl::Status& s) {
  std::fprintf(stderr, "rank %d: %s\n", rank, std::string(s.message()).c_str());
  return 2;
}

struct Settings {
  int iters = 21, warmup = 3;
  std::string dtype = "fp32";
  std::vector<int64_t> sizes;  // values per all-reduce; empty: DefaultSizes()
};

void AddFlags(CLI::App& app, Settings& s) {
  app.add_option("--dtype", s.dtype, "values on the wire: fp32 | bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  app.add_option("--iters", s.iters, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("--warmup", s.warmup, "untimed iterations per size first")->check(CLI::NonNegativeNumber);
  app.add_option("--sizes", s.sizes, "sizes in values (default 1K, 16K, ..., 16M and the DCGAN's 2518337)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
}

// 1K, 16K, ..., 16M values and the DCGAN's gradients, in increasing order.
std::vector<int64_t> DefaultSizes() {
  std::vector<int64_t> sizes;
  for (int64_t n = 1024; n <= (int64_t{1} << 24); n *= 16) sizes.push_back(n);
  sizes.push_back(kDcganGradients);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

// The communicators of one rank: MPI for the host barrier and gathers, NCCL on the GPU.
struct Ranks {
  MpiCommunicator& host;
  NcclCommunicator& nccl;
  CommOptions options;
};

// The slowest rank's time of each timed in-place all-reduce of `n` values (after
// `warmup` untimed ones), each from a host barrier until it has finished on the GPU.
absl::StatusOr<std::vector<double>> TimeAllReduces(const Ranks& ranks, int64_t n, bool bf16, int warmup, int iters) {
  const Tensor buffer = Tensor::Zeros(Shape{n}, bf16 ? DType::kBF16 : DType::kF32, Device::kCuda);
  std::vector<double> samples;
  for (int it = 0; it < warmup + iters; ++it) {
    if (absl::Status s = ranks.host.Barrier(ranks.options); !s.ok()) return s;
    const double t0 = Clock::Real().NowSeconds();
    const absl::Status s =
        bf16 ? ranks.nccl.AllReduceSumBf16(reinterpret_cast<uint16_t*>(buffer.data_bf16()), n, ranks.options)
             : ranks.nccl.AllReduceSum(buffer.data(), n, ranks.options);
    if (!s.ok()) return s;
    CudaSynchronize();
    double seconds = Clock::Real().NowSeconds() - t0, slowest = 0;
    std::vector<double> all(static_cast<size_t>(ranks.host.size()));
    if (absl::Status g = ranks.host.Gather(&seconds, sizeof(double), all.data(), 0, ranks.options); !g.ok()) return g;
    for (double x : all) slowest = std::max(slowest, x);
    if (it >= warmup) samples.push_back(slowest);
  }
  return samples;
}

void PrintHeader(bool bf16, int ranks, int gpu, int iters) {
  std::printf("NCCL all-reduce of %s over %d rank(s), GPU %s, median of %d iterations (slowest rank)\n",
              bf16 ? "bf16" : "float32", ranks, cuda::DeviceName(gpu).c_str(), iters);
  std::printf("%10s %9s | %10s %9s %9s\n", "values", "MB", "time_us", "algbw", "busbw");
  std::printf("%10s %9s | %10s %9s %9s\n", "", "", "", "GB/s", "GB/s");
}

// One size's line: the median time, algbw = bytes / time and busbw = algbw * 2 (n - 1) / n.
void PrintRow(int64_t n, bool bf16, int ranks, const std::vector<double>& samples) {
  const double t = Median(samples), bytes = static_cast<double>(n) * (bf16 ? 2 : 4);
  std::printf("%10lld %9.3f | %10.1f %9.2f %9.2f\n", static_cast<long long>(n), bytes / 1e6, t * 1e6,
              bytes / t / 1e9, bytes / t / 1e9 * 2.0 * (ranks - 1) / ranks);
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  gantry::PreferRingNonBlockingAllReduce();
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create(&argc, &argv);
  if (!mpi.ok()) return Fail(-1, mpi.status());
  MpiCommunicator& host = **mpi;
  CLI::App app("NCCL all-reduce time and bandwidth of gantry's NcclCommunicator (run under mpirun)");
  Settings settings;
  AddFlags(app, settings);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return host.rank() == 0 ? app.exit(e) : e.get_exit_code();
  }
  if (settings.sizes.empty()) settings.sizes = DefaultSizes();
  const CommOptions opts{.timeout_seconds = 60};
  absl::StatusOr<int> local = MpiLocalRank();
  if (!local.ok()) return Fail(host.rank(), local.status());
  absl::StatusOr<int> gpu = cuda::SelectDeviceForLocalRank(*local);
  if (!gpu.ok()) return Fail(host.rank(), gpu.status());
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> nccl = NcclCommunicator::Create(host, opts);
  if (!nccl.ok()) return Fail(host.rank(), nccl.status());
  const bool bf16 = settings.dtype == "bf16";
  if (host.rank() == 0) PrintHeader(bf16, host.size(), *gpu, settings.iters);
  const Ranks ranks{host, **nccl, opts};
  for (int64_t n : settings.sizes) {
    absl::StatusOr<std::vector<double>> samples = TimeAllReduces(ranks, n, bf16, settings.warmup, settings.iters);
    if (!samples.ok()) return Fail(host.rank(), samples.status());
    if (host.rank() == 0) PrintRow(n, bf16, host.size(), *samples);
  }
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) { return gantry::Main(argc, argv); }
