// Fused against separate element-wise layers of the DCGAN: BatchNorm + LeakyReLU (G) and
// Conv2d bias + LeakyReLU (D), forward + backward of just those layers, per layer shape.
// Thread CPU time, best of --repeats runs of at least --min-time seconds (the machine may
// be shared). The convolution itself is left out of the D rows: its bias and activation
// run on a conv output computed once.
//
//   build/bin/gantry-bench-fusion [--batch 256] [--kernels onednn]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"
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
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.Uniform() - 0.5);
  return t;
}

// Forward + backward (input and parameter gradients) of `net` on x.
double TimeNet(Sequential& net, const Context& ctx, const Tensor& x, int repeats, double min_time) {
  std::vector<Layer*> layers = net.layers();
  FlatParameters params(layers);
  const Tensor dy = Random(x.shape(), 9);
  return BestSeconds(
      [&] {
        SequentialCache cache;
        net.Forward(ctx, x, &cache);
        net.Backward(ctx, dy, cache, /*want_input_grad=*/true);
      },
      repeats, min_time);
}

// Bias + LeakyReLU on a conv output, fused (one pass) or separate (two), and the
// backward pieces around them (activation gradient, bias gradient).
double TimeBiasActivation(Backend& be, bool fused, const Tensor& conv_out, int repeats, double min_time) {
  const int64_t n = conv_out.dim(0), c = conv_out.dim(1), hw = conv_out.dim(2) * conv_out.dim(3);
  const Tensor bias = Random(Shape{c}, 3), dbias = Tensor::Zeros(Shape{c}), dy = Random(conv_out.shape(), 4);
  const Tensor y = Tensor::Uninitialized(conv_out.shape()), g = Tensor::Uninitialized(conv_out.shape());
  const Tensor pre = Tensor::Uninitialized(conv_out.shape());
  return BestSeconds(
      [&] {
        y.CopyFrom(conv_out);  // the convolution's output, as it would arrive
        if (fused) {
          be.AddChannelBiasActivation(n, c, hw, bias.data(), Activation::kLeakyRelu, 0.3f, y.data());
          be.ActivationBackward(Activation::kLeakyRelu, 0.3f, y.numel(), y.data(), y.data(), dy.data(), g.data());
        } else {
          be.AddChannelBias(n, c, hw, bias.data(), y.data());
          be.ActivationForward(Activation::kLeakyRelu, 0.3f, y.numel(), y.data(), pre.data());
          be.ActivationBackward(Activation::kLeakyRelu, 0.3f, y.numel(), y.data(), nullptr, dy.data(), g.data());
        }
        be.ChannelSum(n, c, hw, g.data(), dbias.data());
      },
      repeats, min_time);
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-fusion: fused vs separate element-wise layers of the DCGAN"};
  int64_t batch = 256;
  int repeats = 5;
  double min_time = 0.2;
  std::string kernels(DefaultBackendName());
  app.add_option("--batch", batch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--kernels", kernels, "eigen | onednn")->capture_default_str();
  app.add_option("--repeats", repeats, "timed runs (the best counts)")->check(CLI::PositiveNumber);
  app.add_option("--min-time", min_time, "seconds per timed run")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  Backend* backend = FindBackend(kernels);
  if (backend == nullptr) {
    std::fprintf(stderr, "--kernels %s: not built in\n", kernels.c_str());
    return 2;
  }
  Context ctx;
  ctx.backend = backend;
  std::printf("Element-wise layers at batch %ld, ms per forward + backward (thread CPU time, best of %d)\n",
              static_cast<long>(batch), repeats);
  std::printf("%-34s %10s %10s %8s\n", "layers", "separate", "fused", "saved");
  struct BnCase {
    const char* name;
    Shape shape;
  };
  for (const BnCase& c : {BnCase{"G BatchNorm1d(12544) + LeakyReLU", Shape{batch, 12544}},
                          BnCase{"G BatchNorm2d(128) 7x7 + LeakyReLU", Shape{batch, 128, 7, 7}},
                          BnCase{"G BatchNorm2d(64) 14x14 + LeakyReLU", Shape{batch, 64, 14, 14}}}) {
    const Tensor x = Random(c.shape, 1);
    Sequential separate, fused;
    separate.Add(std::make_unique<BatchNorm>(c.shape[1])).Add(MakeLeakyRelu(0.3f));
    fused.Add(std::make_unique<BatchNorm>(c.shape[1], 1e-3f, 0.99f, FusedActivation{Activation::kLeakyRelu, 0.3f}));
    const double s = TimeNet(separate, ctx, x, repeats, min_time), f = TimeNet(fused, ctx, x, repeats, min_time);
    std::printf("%-34s %10.3f %10.3f %7.0f%%\n", c.name, s * 1e3, f * 1e3, 100.0 * (1.0 - f / s));
  }
  for (const BnCase& c : {BnCase{"D conv1 bias + LeakyReLU 64x14x14", Shape{batch, 64, 14, 14}},
                          BnCase{"D conv2 bias + LeakyReLU 128x7x7", Shape{batch, 128, 7, 7}}}) {
    const Tensor conv_out = Random(c.shape, 2);
    const double s = TimeBiasActivation(*backend, false, conv_out, repeats, min_time);
    const double f = TimeBiasActivation(*backend, true, conv_out, repeats, min_time);
    std::printf("%-34s %10.3f %10.3f %7.0f%%\n", c.name, s * 1e3, f * 1e3, 100.0 * (1.0 - f / s));
  }
  return 0;
}
