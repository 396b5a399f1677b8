// Whole DCGAN training-step throughput on one process: samples/s and achieved GFLOP/s
// per global batch size, on synthetic data (as shared/reference/dcgan_torch.py does, so
// the two print comparable tables; run that one with --threads 1 and the same batch).
//
//   build/bin/gantry-bench-step --batch-size 64,128,256,512 --warmup 3 --steps 20
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/timing_summary.h"
#include "worker/models/gan_step.h"
#include "worker/optim/adam.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

// 225,835,904 multiply-adds per sample per step (shared/reference/README.md counts them
// layer by layer): G forward, D forward on real and fake, and both gradient tapes.
constexpr double kFlopsPerSample = 2.0 * 225'835'904.0;

struct Row {
  int64_t batch;
  double median_ms, p90_ms, samples_per_s, gflops;
};

Tensor Uniform(Rng& rng, const Shape& s, double lo, double hi) {
  Tensor t = Tensor::Zeros(s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(lo + (hi - lo) * rng.Uniform());
  return t;
}

Tensor Normal(Rng& rng, const Shape& s) {
  Tensor t = Tensor::Zeros(s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.Normal());
  return t;
}

Row Measure(int64_t batch, int warmup, int steps) {
  Dcgan model(DcganConfig{});
  model.Initialize(InitScheme::kGlorotUniform, 1);
  Adam g_opt(AdamConfig{}, model.g_params().num_params());
  Adam d_opt(AdamConfig{}, model.d_params().num_params());
  Rng rng(2);
  const Tensor real = Uniform(rng, Shape{batch, 1, 28, 28}, -1, 1);
  Context ctx;
  std::vector<double> ms;
  for (int i = 0; i < warmup + steps; ++i) {
    const Tensor z = Normal(rng, Shape{batch, 100});
    ctx.dropout_seed = Mix64(static_cast<uint64_t>(i));
    const double t0 = Clock::Real().NowSeconds();
    ComputeGanGradients(ctx, model, real, z);
    d_opt.Step(*ctx.backend, model.d_params().params(), model.d_params().grads());
    g_opt.Step(*ctx.backend, model.g_params().params(), model.g_params().grads());
    if (i >= warmup) ms.push_back((Clock::Real().NowSeconds() - t0) * 1e3);
  }
  const double median = Percentile(ms, 0.5);
  const double sps = static_cast<double>(batch) * 1e3 / median;
  return Row{batch, median, Percentile(ms, 0.9), sps, sps * kFlopsPerSample * 1e-9};
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  CLI::App app{"gantry-bench-step: DCGAN training-step throughput (1 process, 1 thread)"};
  std::vector<int64_t> batches{64, 128, 256, 512};
  int warmup = 3, steps = 10;
  app.add_option("--batch-size", batches, "global batch sizes")->delimiter(',');
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::printf("DCGAN training step, backend %s, 1 process x 1 thread, %d timed steps after %d warm-up\n",
              std::string(gantry::CpuBackend().name()).c_str(), steps, warmup);
  std::printf("%6s %12s %10s %11s %9s\n", "batch", "median_ms", "p90_ms", "samples/s", "GFLOP/s");
  for (int64_t b : batches) {
    const gantry::Row r = gantry::Measure(b, warmup, steps);
    std::printf("%6ld %12.1f %10.1f %11.1f %9.1f\n", static_cast<long>(r.batch), r.median_ms, r.p90_ms,
                r.samples_per_s, r.gflops);
    std::fflush(stdout);
  }
  return 0;
}
