// Whole DCGAN training-step throughput: samples/s and achieved GFLOP/s per global batch
// size, on synthetic data (as bench/torch/dcgan_torch.py does, so the two print
// comparable tables). One process, or N ranks under mpirun (synchronous data parallel:
// each rank computes its share of the batch, gradients are all-reduced over MPI).
//
//   build/bin/gantry-bench-step --batch-size 64,128,256,512 [--kernels onednn] [--precision bf16]
//   mpirun -np 2 build/bin/gantry-bench-step --batch-size 64,128,256,512
//   mpirun -np 2 build/bin/gantry-bench-step --model image-dcgan --image-size 64 --batch-size 128
//   build/bin/gantry-bench-step --device cuda --precision bf16   (CUDA builds; NCCL under mpirun)
// Reference: dcgan_torch.py --threads 1 [--ddp --world-size 2] [--model image-dcgan] --batch-size B,
// and on a GPU bench/torch/dcgan_torch_gpu.py --device cuda --precision fp32|bf16.
// --model image-dcgan is the image DCGAN (examples/dcgan's network, --dataset images).
// --profile runs the backend through bench/profiling_backend.h and prints rank 0's CPU
// time per step by op and by layer shape after each batch size.
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
#include "bench/profiling_backend.h"
#include "common/batch_shares.h"
#include "common/clock.h"
#include "common/timing_summary.h"
#include "runspec/model_config.h"
#include "worker/models/dcgan.h"
#include "worker/models/image_dcgan.h"
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
constexpr double kDcganFlopsPerSample = 2.0 * 225'835'904.0;

// The image DCGAN's, by the same rule as image_dcgan_model.Bench (whose count
// dcgan_torch.py --count-flops checks against torch's operators): with F_G and F_D the
// networks' forward multiply-adds and G0, D0 their first layers', a step is
// 3 F_G + 7 F_D - G0 - 2 D0 (G forward; D forward twice; D's input gradients on the fake
// branch; G's weight and input gradients; D's weight gradients on both branches and its
// input gradients down to its second layer).
double ImageDcganFlopsPerSample(const ImageDcganConfig& c) {
  const std::vector<int64_t> g = ImageDcganWidths(c.ngf, c.image_size), d = ImageDcganWidths(c.ndf, c.image_size);
  const double k = 16;  // 4x4 kernels
  std::vector<double> gl = {static_cast<double>(c.noise_dim) * static_cast<double>(g[0]) * k};  // 1x1 -> 4x4
  double side = 4;  // the input side of each transposed convolution after the first
  for (size_t i = 1; i < g.size(); ++i, side *= 2) gl.push_back(static_cast<double>(g[i - 1] * g[i]) * k * side * side);
  gl.push_back(static_cast<double>(g.back() * c.channels) * k * side * side);
  std::vector<double> dl;
  side = static_cast<double>(c.image_size) / 2;  // the output side of each convolution
  dl.push_back(static_cast<double>(c.channels * d.back()) * k * side * side);
  for (size_t i = d.size() - 1; i > 0; --i) {
    side /= 2;
    dl.push_back(static_cast<double>(d[i] * d[i - 1]) * k * side * side);
  }
  dl.push_back(static_cast<double>(d[0]) * k);  // 4x4 -> 1x1
  double fg = 0, fd = 0;
  for (double m : gl) fg += m;
  for (double m : dl) fd += m;
  return 2.0 * (3 * fg + 7 * fd - gl[0] - 2 * dl[0]);
}

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
  const ImageDcganConfig* image = nullptr;  // the image DCGAN; null: the 28x28 DCGAN
  ProfilingBackend* profiler = nullptr;     // the backend above, wrapped (--profile)
  size_t profile_top = 30;
};

// One synchronous data-parallel step (see the file comment); returns the seconds spent
// in the all-reduces.
double RunStep(Communicator& comm, const CommOptions& opts, const StepSettings& settings, GanModel& model, Adam& g_opt,
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
  const Device device = settings.backend->device();
  std::unique_ptr<GanModel> owned;
  double flops_per_sample = kDcganFlopsPerSample;
  if (settings.image != nullptr) {
    owned = std::make_unique<ImageDcgan>(*settings.image, device);
    flops_per_sample = ImageDcganFlopsPerSample(*settings.image);
  } else {
    DcganConfig config;
    config.fuse_activations = settings.fuse_activations;
    owned = std::make_unique<Dcgan>(config, device);
  }
  GanModel& model = *owned;
  model.Initialize(InitScheme::kGlorotUniform, 1);
  const Shape sample = model.SampleShape();
  Adam g_opt(AdamConfig{}, model.g_params().num_params(), device);
  Adam d_opt(AdamConfig{}, model.d_params().num_params(), device);
  const CommOptions opts{120.0};
  const RowRange rows = ShareRanges(EvenShares(batch, comm.size()))[static_cast<size_t>(comm.rank())];
  Rng rng(2 + static_cast<uint64_t>(comm.rank()));
  const Tensor real = Random(rng, Shape{rows.size(), sample[0], sample[1], sample[2]}, false).On(device);
  std::vector<double> ms, cpu_ms, allreduce_ms;
  CHECK(comm.Barrier(opts).ok());
  for (int i = 0; i < warmup + steps; ++i) {
    const Tensor z = Random(rng, Shape{rows.size(), 100}, true).On(device);
    const double t0 = Clock::Real().NowSeconds(), c0 = ProcessCpuSeconds();
    const double allreduce_s =
        RunStep(comm, opts, settings, model, g_opt, d_opt, real, z, batch, static_cast<uint64_t>(i));
    if (settings.profiler != nullptr && i + 1 == warmup) settings.profiler->Reset();
    if (i >= warmup) {
      ms.push_back((Clock::Real().NowSeconds() - t0) * 1e3);
      cpu_ms.push_back((ProcessCpuSeconds() - c0) * 1e3);
      allreduce_ms.push_back(allreduce_s * 1e3);
    }
  }
  const double median = Percentile(ms, 0.5);
  const double sps = static_cast<double>(batch) * 1e3 / median;
  if (settings.profiler != nullptr && comm.rank() == 0) {
    double cpu_total = 0;
    for (double c : cpu_ms) cpu_total += c;
    PrintProfile(*settings.profiler, steps, cpu_total / steps, settings.profile_top);
  }
  return Row{median, Percentile(ms, 0.9), Percentile(cpu_ms, 0.5), Percentile(allreduce_ms, 0.5), sps,
             sps * flops_per_sample * 1e-9};
}

struct Settings {
  std::vector<int64_t> batches{64, 128, 256, 512};  // global
  int warmup = 3, steps = 10;
  std::string kernels{DefaultBackendName()}, precision_name = "fp32", device_name = "cpu";
  bool no_fusion = false;
  bool profile = false;
  std::string model = "dcgan";
  ImageDcganConfig image;  // --model image-dcgan
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
  app.add_flag("--profile", s.profile, "print where each step's CPU time goes, op by op (rank 0)");
  app.add_option("--model", s.model, "dcgan (28x28) | image-dcgan (examples/dcgan's network)")
      ->check(CLI::IsMember({"dcgan", "image-dcgan"}))
      ->capture_default_str();
  app.add_option("--image-size", s.image.image_size, "image-dcgan: 32 | 64 | 128")
      ->check(CLI::IsMember({32, 64, 128}))
      ->capture_default_str();
  app.add_option("--channels", s.image.channels, "image-dcgan: 1 to 4")->check(CLI::Range(1, 4))->capture_default_str();
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
  const std::string model = s.model == "dcgan" ? "DCGAN 1x28x28"
                                                : "image DCGAN " + std::to_string(s.image.channels) + "x" +
                                                      std::to_string(s.image.image_size) + "x" +
                                                      std::to_string(s.image.image_size);
  std::printf("%s training step on %s, precision %s, activations %s, %d rank(s) x 1 thread, gradients over "
              "%s, %d timed steps after %d warm-up\n",
              model.c_str(), device.description.c_str(), s.precision_name.c_str(), s.no_fusion ? "separate" : "fused", ranks,
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
  std::unique_ptr<ProfilingBackend> profiler =
      settings.profile ? std::make_unique<ProfilingBackend>(*device->backend) : nullptr;
  const StepSettings step{profiler ? profiler.get() : device->backend, settings.precision, !settings.no_fusion,
                          gradient_comm, settings.model == "image-dcgan" ? &settings.image : nullptr, profiler.get()};
  const bool root = comm.rank() == 0;
  if (root) PrintHeader(settings, *device, step, comm.size());
  for (int64_t b : settings.batches) {
    const Row r = Measure(comm, step, b, settings.warmup, settings.steps);
    if (root) PrintRow(b, comm.size(), r);
  }
  return 0;
}
