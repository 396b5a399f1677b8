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
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/bench_ranks.h"
#include "bench/profiling_backend.h"
#include "common/clock.h"
#include "common/math_precision.h"
#include "worker/models/pix2pix.h"
#include "worker/optim/optimizer.h"
#include "worker/tensor/backend_registry.h"
#include "worker/train/data_parallel_step.h"
#include "worker/train/training_device.h"

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Settings {
  gantry::Pix2pixConfig config;
  std::vector<int64_t> batches{1, 4};  // per rank
  int warmup = 2, steps = 10;
  std::string kernels{gantry::DefaultBackendName()}, precision_name = "fp32", norm = "batch";
  bool profile = false;
  size_t profile_top = 30;
  gantry::MathPrecision precision = gantry::MathPrecision::kFp32;  // from precision_name, by Resolve
};

void AddFlags(CLI::App& app, Settings& s) {
  app.add_option("--image-size", s.config.image_size, "crop side (power of two >= 32)")->capture_default_str();
  app.add_option("--ngf", s.config.ngf, "generator filters")->capture_default_str();
  app.add_option("--ndf", s.config.ndf, "discriminator filters")->capture_default_str();
  app.add_option("--norm", s.norm, "batch | instance")->capture_default_str();
  app.add_option("--batch-size", s.batches, "batch sizes")->delimiter(',');
  app.add_option("--warmup", s.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", s.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--kernels", s.kernels, "eigen | onednn (when built)")->capture_default_str();
  app.add_option("--precision", s.precision_name, "fp32 | bf16 | fp16")->capture_default_str();
  app.add_flag("--profile", s.profile, "print where each step's CPU time goes, op by op");
  app.add_option("--profile-top", s.profile_top, "ops listed by --profile")->capture_default_str();
}

// Resolves the precision and the norm; false, with the settings on stderr, when one of
// them (or the kernels, or the image size) is not one this build runs.
bool Resolve(Settings& s) {
  const std::optional<gantry::MathPrecision> precision = gantry::ParseMathPrecision(s.precision_name);
  const std::string size_problem = gantry::Pix2pixImageSizeProblem(s.config.image_size);
  if (gantry::FindBackend(s.kernels) == nullptr || !precision || !size_problem.empty() ||
      (s.norm != "batch" && s.norm != "instance")) {
    std::fprintf(stderr, "bad settings: --kernels %s --precision %s --norm %s --image-size %ld %s\n",
                 s.kernels.c_str(), s.precision_name.c_str(), s.norm.c_str(), static_cast<long>(s.config.image_size),
                 size_problem.c_str());
    return false;
  }
  s.precision = *precision;
  s.config.norm = s.norm == "instance" ? gantry::NormKind::kInstance : gantry::NormKind::kBatch;
  return true;
}

// What times the steps: the model, its optimizers and the data-parallel step on this
// rank's device, behind the profiler with --profile.
class StepRig {
 public:
  StepRig(const Settings& s, gantry::Communicator& comm, gantry::TrainingDevice& device)
      : comm_(comm),
        device_(device),
        profiler_(s.profile ? std::make_unique<gantry::ProfilingBackend>(*device.backend) : nullptr),
        backend_(profiler_ ? profiler_.get() : device.backend),
        model_(s.config, backend_->device()),
        g_opt_(*gantry::MakeOptimizer(Adam(), model_.g_params().num_params(), backend_->device())),
        d_opt_(*gantry::MakeOptimizer(Adam(), model_.d_params().num_params(), backend_->device())),
        step_(Initialized(model_), *g_opt_, *d_opt_, comm, *backend_, kCommOptions, false, gantry::Clock::Real(), {},
              Mixed(s.precision)) {}

  static constexpr gantry::CommOptions kCommOptions{300.0};

  // rank 0's wall time and all-reduce time of each timed step, and its CPU time over them.
  struct Times {
    std::vector<double> ms, allreduce_ms;
    double cpu_ms = 0;
  };

  // Times `warmup` untimed and `steps` timed steps of `batch` rows per rank, each after a
  // barrier; unset when a barrier or a step fails.
  std::optional<Times> TimeBatch(int64_t batch, int warmup, int steps, gantry::Rng& rng);

  gantry::Pix2pix& model() { return model_; }
  const gantry::ProfilingBackend* profiler() const { return profiler_.get(); }

 private:
  static gantry::OptimizerConfig Adam() {
    gantry::OptimizerConfig oc;
    oc.lr = 2e-4f;
    return oc;
  }
  static gantry::MixedPrecision Mixed(gantry::MathPrecision precision) {
    gantry::MixedPrecision mixed;
    mixed.precision = precision;
    return mixed;
  }
  static gantry::Pix2pix& Initialized(gantry::Pix2pix& model) {
    model.Initialize(gantry::InitScheme::kNormal002, 1);
    return model;
  }

  gantry::Communicator& comm_;
  gantry::TrainingDevice& device_;
  std::unique_ptr<gantry::ProfilingBackend> profiler_;
  gantry::Backend* backend_;
  gantry::Pix2pix model_;
  std::unique_ptr<gantry::Optimizer> g_opt_, d_opt_;
  gantry::DataParallelStep step_;
};

std::optional<StepRig::Times> StepRig::TimeBatch(int64_t b, int warmup, int steps, gantry::Rng& rng) {
  using namespace gantry;
  const int64_t global = b * comm_.size(), begin = b * comm_.rank();
  Tensor rows = Tensor::Zeros(Shape{b, 7, model_.config().image_size, model_.config().image_size});
  for (int64_t i = 0; i < rows.numel(); ++i) rows.data()[i] = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  const Device device = backend_->device();
  const GanInputs in = model_.StepInputs(rows.On(device), rng, global, begin, begin + b, device);
  Times times;
  for (int s = 0; s < warmup + steps; ++s) {
    if (profiler_ && s == warmup) profiler_->Reset();
    if (!comm_.Barrier(kCommOptions).ok()) return std::nullopt;
    const double c0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    const absl::StatusOr<DataParallelStepResult> result = step_.Run(in, global, static_cast<uint64_t>(s));
    if (!result.ok()) return std::nullopt;
    backend_->Synchronize();
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s >= warmup) {
      times.ms.push_back(wall);
      times.allreduce_ms.push_back(result->allreduce_s * 1e3);
      times.cpu_ms += (CpuSeconds() - c0) * 1e3;
    }
  }
  return times;
}

void PrintHeader(const Settings& s, const gantry::TrainingDevice& device, gantry::Pix2pix& model, int ranks) {
  std::printf("Pix2Pix step on %s, %s, %ld px, ngf %ld, ndf %ld, norm %s: G %ld, D %ld parameters, %d rank(s) x 1 "
              "thread, %d timed steps after %d warm-up\n",
              device.description.c_str(), s.precision_name.c_str(), static_cast<long>(s.config.image_size),
              static_cast<long>(s.config.ngf), static_cast<long>(s.config.ndf), s.norm.c_str(),
              static_cast<long>(model.g_params().num_params()), static_cast<long>(model.d_params().num_params()),
              ranks, s.steps, s.warmup);
  std::printf("%6s %6s %11s %9s %9s %11s\n", "batch", "ranks", "median_ms", "p90_ms", "cpu_ms", "samples/s");
}

// One batch size's line (median and p90 wall ms, CPU ms per step, samples/s of the
// global batch), the all-reduce's median with more than one rank, and the profile.
void PrintBatch(const Settings& s, int64_t b, int ranks, StepRig::Times times,
                const gantry::ProfilingBackend* profile) {
  std::sort(times.ms.begin(), times.ms.end());
  const std::vector<double>& ms = times.ms;
  const double median = ms[ms.size() / 2], p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
  std::printf("%6ld %6d %11.1f %9.1f %9.1f %11.2f\n", static_cast<long>(b), ranks, median, p90,
              times.cpu_ms / s.steps, 1e3 * static_cast<double>(b * ranks) / median);
  if (ranks > 1) {
    std::sort(times.allreduce_ms.begin(), times.allreduce_ms.end());
    std::printf("  gradient all-reduce (rank 0, median wall ms per step, waiting for peers included): %.1f\n",
                times.allreduce_ms[times.allreduce_ms.size() / 2]);
  }
  if (profile) gantry::PrintProfile(*profile, s.steps, times.cpu_ms / s.steps, s.profile_top);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-pix2pix: Pix2Pix training-step time, one rank, one thread"};
  Settings settings;
  AddFlags(app, settings);
  CLI11_PARSE(app, argc, argv);
  if (!Resolve(settings)) return 2;

  BenchRanks ranks = BenchRanks::Join(&argc, &argv);
  Communicator& comm = ranks.comm();
  TrainConfig device_config;
  device_config.kernels = settings.kernels;
  absl::StatusOr<TrainingDevice> device = OpenTrainingDevice(device_config, comm, StepRig::kCommOptions);
  if (!device.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", comm.rank(), std::string(device.status().message()).c_str());
    return 2;
  }
  StepRig rig(settings, comm, *device);
  const bool root = comm.rank() == 0;
  if (root) PrintHeader(settings, *device, rig.model(), comm.size());
  Rng rng(7 + static_cast<uint64_t>(comm.rank()));
  for (int64_t b : settings.batches) {
    std::optional<StepRig::Times> times = rig.TimeBatch(b, settings.warmup, settings.steps, rng);
    if (!times) return 1;
    if (root) PrintBatch(settings, b, comm.size(), *std::move(times), rig.profiler());
  }
  return 0;
}
