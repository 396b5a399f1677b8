// What --augment costs a GAN step: the op's share of one step (two forwards, T(real) and
// T(fake), and one backward, G's gradient through T(fake)) per policy at a given batch and
// image size, and the whole DCGAN step (1x28x28) with and without the full policy.
// Thread CPU time, best of --repeats runs of at least --min-time seconds (the machine may
// be shared; the op is single-threaded plain loops, the step's products use --kernels).
//
//   build/bin/gantry-bench-augment [--batch 128] [--channels 3] [--size 64] [--kernels onednn]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "worker/layers/diff_augment.h"
#include "worker/models/dcgan.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double BestSeconds(const std::function<void()>& call, int repeats, double min_time) {
  call();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const double t0 = ThreadCpuSeconds();
    int64_t calls = 0;
    do {
      call();
      ++calls;
    } while (ThreadCpuSeconds() - t0 < min_time);
    best = std::min(best, (ThreadCpuSeconds() - t0) / static_cast<double>(calls));
  }
  return best;
}

Tensor Random(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::Zeros(s);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(2 * rng.Uniform() - 1);
  return t;
}

// The op's work in one step: T(real), T(fake), and the adjoint for G's gradient.
double TimeOpPerStep(const AugmentTransforms& transforms, const Shape& images, int repeats, double min_time) {
  DiffAugment op(transforms);
  const Tensor real = Random(images, 1), fake = Random(images, 2), grad = Random(images, 3);
  Context ctx;
  return BestSeconds(
      [&] {
        ActivationCache real_cache, fake_cache;
        ctx.dropout_seed = 11;
        op.Forward(ctx, real, &real_cache);
        ctx.dropout_seed = 12;
        op.Forward(ctx, fake, &fake_cache);
        op.Backward(ctx, grad, fake_cache, /*want_input_grad=*/true);
      },
      repeats, min_time);
}

// One whole DCGAN gradient step (no optimizer) with `augment`.
double TimeDcganStep(Backend& backend, const AugmentPolicy& augment, int64_t batch, int repeats, double min_time) {
  Dcgan model(DcganConfig{}, Device::kCpu, augment);
  model.Initialize(InitScheme::kGlorotUniform, 1);
  const GanInputs inputs{Random(Shape{batch, 1, 28, 28}, 4), Random(Shape{batch, 100}, 5)};
  Context ctx;
  ctx.backend = &backend;
  uint64_t seed = 0;
  return BestSeconds(
      [&] {
        ctx.dropout_seed = ++seed;
        model.ComputeGradients(ctx, inputs, {});
      },
      repeats, min_time);
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-augment: the cost of --augment per GAN step"};
  int64_t batch = 128, channels = 3, size = 64;
  int repeats = 5;
  double min_time = 0.3;
  std::string kernels(DefaultBackendName());
  app.add_option("--batch", batch, "rows per step (one rank's)")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--channels", channels, "image channels")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--size", size, "image side")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--kernels", kernels, "eigen | onednn: the DCGAN step's kernels")->capture_default_str();
  app.add_option("--repeats", repeats, "timed runs (the best counts)")->check(CLI::PositiveNumber);
  app.add_option("--min-time", min_time, "seconds per timed run")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  Backend* backend = FindBackend(kernels);
  if (backend == nullptr) {
    std::fprintf(stderr, "--kernels %s: not built in\n", kernels.c_str());
    return 2;
  }
  const Shape images{batch, channels, size, size};
  std::printf("--augment per step at batch %ld, %ldx%ldx%ld images: 2 forwards + 1 backward, ms (thread CPU time, "
              "best of %d)\n", static_cast<long>(batch), static_cast<long>(channels), static_cast<long>(size),
              static_cast<long>(size), repeats);
  const std::vector<std::pair<const char*, AugmentTransforms>> policies = {
      {"color", {.color = true}},
      {"translation", {.translation = true}},
      {"cutout", {.cutout = true}},
      {"color,translation,cutout", {.color = true, .translation = true, .cutout = true}}};
  for (const auto& [name, transforms] : policies) {
    std::printf("  %-26s %8.2f\n", name, TimeOpPerStep(transforms, images, repeats, min_time) * 1e3);
  }
  const double plain = TimeDcganStep(*backend, AugmentPolicy{}, batch, repeats, min_time);
  const double augmented =
      TimeDcganStep(*backend, AugmentPolicy{.color = true, .translation = true, .cutout = true}, batch, repeats,
                    min_time);
  std::printf("DCGAN 1x28x28 gradient step at batch %ld (%s): %.1f ms, with --augment color,translation,cutout "
              "%.1f ms (%+.1f%%)\n", static_cast<long>(batch), kernels.c_str(), plain * 1e3, augmented * 1e3,
              100.0 * (augmented / plain - 1.0));
  return 0;
}
