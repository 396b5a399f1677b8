// Whole DCGAN training-step throughput: samples/s and achieved GFLOP/s per global batch
// size, on synthetic data (as bench/torch/dcgan_torch.py does, so the two print
// comparable tables). One process, or N ranks under mpirun (synchronous data parallel:
// each rank computes its share of the batch, gradients are all-reduced over MPI).
//
//   build/bin/gantry-bench-step --batch-size 64,128,256,512 [--kernels onednn] [--precision bf16]
//   mpirun -np 2 build/bin/gantry-bench-step --batch-size 64,128,256,512
//   build/bin/gantry-bench-step --device cuda --precision bf16   (CUDA builds; NCCL under mpirun)
// Reference: dcgan_torch.py --threads 1 [--ddp --world-size 2] --batch-size B, and on a
// GPU bench/torch/dcgan_torch_gpu.py --device cuda --precision fp32|bf16.
//
// The step is DataParallelStep::Run's sequence (gradients of the rank's share, one sum
// all-reduce per network, both Adam steps) written out here, because DataParallelStep
// does not carry a MathPrecision (the mixed-precision work adds that).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/bench_ranks.h"
#include "common/batch_shares.h"
#include "common/clock.h"
#include "common/timing_summary.h"
#include "worker/models/dcgan.h"
#include "worker/models/gan_step.h"
#include "worker/optim/adam.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"
#include "worker/train/training_device.h"
#if GANTRY_HAVE_ONEDNN
#include "worker/tensor/onednn/onednn_backend.h"
#endif

namespace gantry {
namespace {

// 225,835,904 multiply-adds per sample per step (bench/torch/README.md counts them
// layer by layer): G forward, D forward on real and fake, and both gradient tapes.
constexpr double kFlopsPerSample = 2.0 * 225'835'904.0;

struct Row {
  double median_ms, p90_ms, cpu_ms, allreduce_ms, samples_per_s, gflops;
};

// This process's CPU time: on a shared machine, the step's own work without the time
// slices other processes took (MPI's busy-polling in the all-reduce counts, though).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Tensor Random(Rng& rng, const Shape& s, bool normal) {
  Tensor t = Tensor::Zeros(s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data()[i] = static_cast<float>(normal ? rng.Normal() : 2.0 * rng.Uniform() - 1.0);
  }
  return t;
}

struct StepSettings {
  Backend* backend;
  MathPrecision precision;
  bool fuse_activations;
  Communicator* gradient_comm;  // all-reduces the gradients, in the backend's memory
};

// One synchronous data-parallel step (see the file comment); returns the seconds spent
// in the all-reduces.
double RunStep(Communicator& comm, const CommOptions& opts, const StepSettings& settings, Dcgan& model, Adam& g_opt,
               Adam& d_opt, const Tensor& real, const Tensor& z, int64_t global_batch, uint64_t seed) {
  Context ctx;
  ctx.backend = settings.backend;
  ctx.precision = settings.precision;
  ctx.dropout_seed = seed;
  const float weight = static_cast<float>(static_cast<double>(real.dim(0)) / static_cast<double>(global_batch));
  ComputeGanGradients(ctx, model, real, z, weight);
  double allreduce_s = 0.0;
  if (comm.size() > 1) {
    settings.backend->Synchronize();  // a GPU's backward passes count as compute
    const double t0 = Clock::Real().NowSeconds();
    for (FlatParameters* p : {&model.d_params(), &model.g_params()}) {
      const absl::Status s = settings.gradient_comm->AllReduceSum(p->grads().data(), p->grads().numel(), opts);
      CHECK(s.ok()) << "all-reduce failed: " << s;
    }
    allreduce_s = Clock::Real().NowSeconds() - t0;
  }
  d_opt.Step(*settings.backend, model.d_params().params(), model.d_params().grads());
  g_opt.Step(*settings.backend, model.g_params().params(), model.g_params().grads());
  settings.backend->Synchronize();
  return allreduce_s;
}

// Times `steps` steps after `warmup`; step times are rank 0's, after a barrier per step
// so every rank's step is inside it.
Row Measure(Communicator& comm, const StepSettings& settings, int64_t batch, int warmup, int steps) {
  DcganConfig config;
  config.fuse_activations = settings.fuse_activations;
  const Device device = settings.backend->device();
  Dcgan model(config, device);
  model.Initialize(InitScheme::kGlorotUniform, 1);
  Adam g_opt(AdamConfig{}, model.g_params().num_params(), device);
  Adam d_opt(AdamConfig{}, model.d_params().num_params(), device);
  const CommOptions opts{120.0};
  const RowRange rows = ShareRanges(EvenShares(batch, comm.size()))[static_cast<size_t>(comm.rank())];
  Rng rng(2 + static_cast<uint64_t>(comm.rank()));
  const Tensor real = Random(rng, Shape{rows.size(), 1, 28, 28}, false).On(device);
  std::vector<double> ms, cpu_ms, allreduce_ms;
  CHECK(comm.Barrier(opts).ok());
  for (int i = 0; i < warmup + steps; ++i) {
    const Tensor z = Random(rng, Shape{rows.size(), 100}, true).On(device);
    const double t0 = Clock::Real().NowSeconds(), c0 = ProcessCpuSeconds();
    const double allreduce_s =
        RunStep(comm, opts, settings, model, g_opt, d_opt, real, z, batch, static_cast<uint64_t>(i));
    if (i >= warmup) {
      ms.push_back((Clock::Real().NowSeconds() - t0) * 1e3);
      cpu_ms.push_back((ProcessCpuSeconds() - c0) * 1e3);
      allreduce_ms.push_back(allreduce_s * 1e3);
    }
  }
  const double median = Percentile(ms, 0.5);
  const double sps = static_cast<double>(batch) * 1e3 / median;
  return Row{median, Percentile(ms, 0.9), Percentile(cpu_ms, 0.5), Percentile(allreduce_ms, 0.5), sps,
             sps * kFlopsPerSample * 1e-9};
}

struct Settings {
  std::vector<int64_t> batches{64, 128, 256, 512};  // global
  int warmup = 3, steps = 10;
  std::string kernels{DefaultBackendName()}, precision_name = "fp32", device_name = "cpu";
  bool no_fusion = false;
  MathPrecision precision = MathPrecision::kFp32;  // from precision_name, by Resolve
};

void AddFlags(CLI::App& app, Settings& s) {
  app.add_option("--batch-size", s.batches, "global batch sizes")->delimiter(',');
  app.add_option("--warmup", s.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", s.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--kernels", s.kernels, "eigen | onednn (when built); for --device cpu")->capture_default_str();
  app.add_option("--device", s.device_name, "cpu | cuda (CUDA builds: one GPU per rank, NCCL under mpirun)")
      ->capture_default_str();
  app.add_option("--precision", s.precision_name, "fp32 | bf16 | fp16 (operands of the matrix products)")
      ->capture_default_str();
  app.add_flag("--no-fusion", s.no_fusion, "separate LeakyReLU layers instead of fusing them into BatchNorm/Conv2d");
}

// Resolves the precision; false, with what this build takes on stderr, when it or the
// kernels are not ones it runs.
bool Resolve(Settings& s) {
  const std::optional<MathPrecision> precision = ParseMathPrecision(s.precision_name);
  if (FindBackend(s.kernels) == nullptr || !precision) {
    std::fprintf(stderr, "--kernels %s / --precision %s: expected kernels eigen%s and precision fp32, bf16 or fp16\n",
                 s.kernels.c_str(), s.precision_name.c_str(), FindBackend("onednn") != nullptr ? " or onednn" : "");
    return false;
  }
  s.precision = *precision;
  return true;
}

void PrintHeader(const Settings& s, const TrainingDevice& device, const StepSettings& step, int ranks) {
  std::printf("DCGAN training step on %s, precision %s, activations %s, %d rank(s) x 1 thread, gradients over "
              "%s, %d timed steps after %d warm-up\n",
              device.description.c_str(), s.precision_name.c_str(), s.no_fusion ? "separate" : "fused", ranks,
              step.gradient_comm->backend_name().c_str(), s.steps, s.warmup);
#if GANTRY_HAVE_ONEDNN
  if (step.backend->name() == "onednn") std::printf("%s\n", OnednnDescription().c_str());
#endif
  std::printf("%6s %6s %11s %9s %11s %13s %11s %9s\n", "batch", "ranks", "median_ms", "p90_ms", "cpu_ms",
              "allreduce_ms", "samples/s", "GFLOP/s");
}

void PrintRow(int64_t batch, int ranks, const Row& r) {
  std::printf("%6ld %6d %11.1f %9.1f %11.1f %13.2f %11.1f %9.1f\n", static_cast<long>(batch), ranks, r.median_ms,
              r.p90_ms, r.cpu_ms, r.allreduce_ms, r.samples_per_s, r.gflops);
  std::fflush(stdout);
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-step: DCGAN training-step throughput (1 thread per rank)"};
  Settings settings;
  AddFlags(app, settings);
  CLI11_PARSE(app, argc, argv);
  if (!Resolve(settings)) return 2;

  BenchRanks ranks = BenchRanks::Join(&argc, &argv);
  Communicator& comm = ranks.comm();
  TrainConfig device_config;
  device_config.device = settings.device_name;
  device_config.kernels = settings.kernels;
  absl::StatusOr<TrainingDevice> device = OpenTrainingDevice(device_config, comm, CommOptions{120.0});
  if (!device.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", comm.rank(), std::string(device.status().message()).c_str());
    return 2;
  }
  Communicator* gradient_comm = device->gradient_comm ? device->gradient_comm.get() : &comm;
  const StepSettings step{device->backend, settings.precision, !settings.no_fusion, gradient_comm};
  const bool root = comm.rank() == 0;
  if (root) PrintHeader(settings, *device, step, comm.size());
  for (int64_t b : settings.batches) {
    const Row r = Measure(comm, step, b, settings.warmup, settings.steps);
    if (root) PrintRow(b, comm.size(), r);
  }
  return 0;
}
