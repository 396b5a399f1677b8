// Pix2Pix training-step time, one rank or N ranks under mpirun (1 thread each):
// DataParallelStep::Run on synthetic rows (G and D gradients of the rank's share, the
// gradient all-reduce over MPI, Adam on both networks), median and p90 wall time per step
// and the process CPU time, for each PER-RANK batch size (the global batch is
// ranks x batch, as PyTorch DDP counts it). On a shared machine the CPU time is the
// step's own work; wall time includes the slices other processes took. Step times are
// rank 0's, with a barrier before every step so each step covers every rank's.
//
//   build/bin/gantry-bench-pix2pix --image-size 32 --ngf 8 --ndf 8 --batch-size 1,4
//   build/bin/gantry-bench-pix2pix --image-size 128 --batch-size 1,8 [--kernels eigen] [--precision bf16]
//   mpirun -np 2 build/bin/gantry-bench-pix2pix --image-size 128 --batch-size 1,4,8
//   build/bin/gantry-bench-pix2pix --image-size 128 --batch-size 4 --profile   # where the time goes
// --profile runs the backend through bench/profiling_backend.h and prints, after each
// batch size's line, rank 0's CPU time per step by op kind and by op and shape (a
// convolution's shape names its layer); "outside the backend" is the rest of the step.
// PyTorch yardstick: bench/torch/pix2pix_torch.py; side by side: bench/pix2pix_vs_torch.sh.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/profiling_backend.h"
#include "common/clock.h"
#include "common/math_precision.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"
#include "worker/models/pix2pix.h"
#include "worker/optim/optimizer.h"
#include "worker/tensor/backend_registry.h"
#include "worker/train/data_parallel_step.h"
#include "worker/train/training_device.h"

namespace {

// Rank 0's per-step CPU time by op kind, then the `top` costliest ops with their shapes.
void PrintProfile(const gantry::ProfilingBackend& profile, int steps, double step_cpu_ms, size_t top) {
  const std::vector<gantry::ProfilingBackend::Entry> entries = profile.Entries();
  std::map<std::string, std::pair<double, int64_t>> kinds;
  for (const auto& e : entries) {
    auto& k = kinds[e.key.substr(0, e.key.find(' '))];
    k.first += e.cpu_s;
    k.second += e.calls;
  }
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> sorted(kinds.begin(), kinds.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double inside_ms = profile.TotalSeconds() * 1e3 / steps;
  std::printf("  profile (CPU ms per step, rank 0): %.1f in the backend, %.1f outside it\n", inside_ms,
              step_cpu_ms - inside_ms);
  for (const auto& [kind, v] : sorted) {
    std::printf("    %-22s %9.1f ms %5.1f%% %6ld calls\n", kind.c_str(), v.first * 1e3 / steps,
                100.0 * v.first * 1e3 / steps / step_cpu_ms, static_cast<long>(v.second / steps));
  }
  std::printf("  costliest ops:\n");
  for (size_t i = 0; i < std::min(top, entries.size()); ++i) {
    const gantry::ProfilingBackend::Entry& e = entries[i];
    std::printf("    %-52s %8.2f ms %4ld calls", e.key.c_str(), e.cpu_s * 1e3 / steps, static_cast<long>(e.calls / steps));
    if (e.macs > 0) std::printf(" %6.1f GFLOP/s", 2 * e.macs / e.cpu_s * 1e-9);
    std::printf("\n");
  }
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-pix2pix: Pix2Pix training-step time, one rank, one thread"};
  Pix2pixConfig config;
  std::vector<int64_t> batches{1, 4};
  int warmup = 2, steps = 10;
  std::string kernels(DefaultBackendName()), precision_name = "fp32", norm = "batch";
  app.add_option("--image-size", config.image_size, "crop side (power of two >= 32)")->capture_default_str();
  app.add_option("--ngf", config.ngf, "generator filters")->capture_default_str();
  app.add_option("--ndf", config.ndf, "discriminator filters")->capture_default_str();
  app.add_option("--norm", norm, "batch | instance")->capture_default_str();
  app.add_option("--batch-size", batches, "batch sizes")->delimiter(',');
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--kernels", kernels, "eigen | onednn (when built)")->capture_default_str();
  app.add_option("--precision", precision_name, "fp32 | bf16 | fp16")->capture_default_str();
  bool profile = false;
  size_t profile_top = 30;
  app.add_flag("--profile", profile, "print where each step's CPU time goes, op by op");
  app.add_option("--profile-top", profile_top, "ops listed by --profile")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::optional<MathPrecision> precision = ParseMathPrecision(precision_name);
  const std::string size_problem = Pix2pixImageSizeProblem(config.image_size);
  if (FindBackend(kernels) == nullptr || !precision || !size_problem.empty() || (norm != "batch" && norm != "instance")) {
    std::fprintf(stderr, "bad settings: --kernels %s --precision %s --norm %s --image-size %ld %s\n", kernels.c_str(),
                 precision_name.c_str(), norm.c_str(), static_cast<long>(config.image_size), size_problem.c_str());
    return 2;
  }
  config.norm = norm == "instance" ? NormKind::kInstance : NormKind::kBatch;

  std::unique_ptr<MpiCommunicator> mpi;
  std::unique_ptr<Communicator> solo;
  if (MpiCommunicator::LaunchedUnderMpi()) {
    PreferRingNonBlockingAllReduce();
    mpi = std::move(*MpiCommunicator::Create(&argc, &argv));
  } else {
    solo = LocalGroup(1).Rank(0);
  }
  Communicator* comm = mpi ? static_cast<Communicator*>(mpi.get()) : solo.get();
  const bool root = comm->rank() == 0;
  const CommOptions comm_options{300.0};
  TrainConfig device_config;
  device_config.kernels = kernels;
  absl::StatusOr<TrainingDevice> device = OpenTrainingDevice(device_config, *comm, comm_options);
  if (!device.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", comm->rank(), std::string(device.status().message()).c_str());
    return 2;
  }
  std::unique_ptr<ProfilingBackend> profiler;
  if (profile) {
    profiler = std::make_unique<ProfilingBackend>(*device->backend);
    device->backend = profiler.get();
  }
  Pix2pix model(config, device->backend->device());
  model.Initialize(InitScheme::kNormal002, 1);
  OptimizerConfig oc;
  oc.lr = 2e-4f;
  auto g_opt = MakeOptimizer(oc, model.g_params().num_params(), device->backend->device());
  auto d_opt = MakeOptimizer(oc, model.d_params().num_params(), device->backend->device());
  MixedPrecision mixed;
  mixed.precision = *precision;
  DataParallelStep step(model, **g_opt, **d_opt, *comm, *device->backend, comm_options, false, Clock::Real(), {},
                        mixed);
  const int ranks = comm->size();
  if (root) {
    std::printf("Pix2Pix step on %s, %s, %ld px, ngf %ld, ndf %ld, norm %s: G %ld, D %ld parameters, %d rank(s) x 1 "
                "thread, %d timed steps after %d warm-up\n",
                device->description.c_str(), precision_name.c_str(), static_cast<long>(config.image_size),
                static_cast<long>(config.ngf), static_cast<long>(config.ndf), norm.c_str(),
                static_cast<long>(model.g_params().num_params()), static_cast<long>(model.d_params().num_params()),
                ranks, steps, warmup);
    std::printf("%6s %6s %11s %9s %9s %11s\n", "batch", "ranks", "median_ms", "p90_ms", "cpu_ms", "samples/s");
  }
  Rng rng(7 + static_cast<uint64_t>(comm->rank()));
  for (int64_t b : batches) {
    const int64_t global = b * ranks, begin = b * comm->rank();
    Tensor rows = Tensor::Zeros(Shape{b, 7, config.image_size, config.image_size});
    for (int64_t i = 0; i < rows.numel(); ++i) rows.data()[i] = static_cast<float>(2.0 * rng.Uniform() - 1.0);
    const GanInputs in =
        model.StepInputs(rows.On(device->backend->device()), rng, global, begin, begin + b, device->backend->device());
    std::vector<double> ms, allreduce_ms;
    double cpu = 0;
    for (int s = 0; s < warmup + steps; ++s) {
      if (profiler && s == warmup) profiler->Reset();
      if (!comm->Barrier(comm_options).ok()) return 1;
      const double c0 = CpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      const absl::StatusOr<DataParallelStepResult> result = step.Run(in, global, static_cast<uint64_t>(s));
      if (!result.ok()) return 1;
      device->backend->Synchronize();
      const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (s >= warmup) {
        ms.push_back(wall);
        allreduce_ms.push_back(result->allreduce_s * 1e3);
        cpu += (CpuSeconds() - c0) * 1e3;
      }
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2], p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
    if (root) {
      std::printf("%6ld %6d %11.1f %9.1f %9.1f %11.2f\n", static_cast<long>(b), ranks, median, p90, cpu / steps,
                  1e3 * static_cast<double>(global) / median);
      if (ranks > 1) {
        std::sort(allreduce_ms.begin(), allreduce_ms.end());
        std::printf("  gradient all-reduce (rank 0, median wall ms per step, waiting for peers included): %.1f\n",
                    allreduce_ms[allreduce_ms.size() / 2]);
      }
      if (profiler) PrintProfile(*profiler, steps, cpu / steps, profile_top);
      std::fflush(stdout);
    }
  }
  return 0;
}
