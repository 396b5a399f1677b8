// GEMM, Conv2d and ConvTranspose2d of the DCGAN's shapes, forward and backward, on the
// reference CPU backend. Counters: GFLOP/s (2 flops per multiply-add actually done).
//   build/bin/gantry-bench-kernels --benchmark_counters_tabular=true
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

Tensor Random(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::Zeros(s);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.Uniform() - 0.5);
  return t;
}

void SetFlops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = Random(Shape{n, n}, 1), b = Random(Shape{n, n}, 2), c = Tensor::Zeros(Shape{n, n});
  for (auto _ : state) {
    CpuBackend().Gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_Gemm)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

// One DCGAN conv layer: {batch, in_ch, out_ch, in_hw, stride, output_padding, transposed}.
struct ConvCase {
  int64_t in_ch, out_ch, in_hw, stride, output_padding;
  bool transposed;
};
const ConvCase kCases[] = {
    {256, 128, 7, 1, 0, true},   // G deconv1
    {128, 64, 7, 2, 1, true},    // G deconv2
    {64, 1, 14, 2, 1, true},     // G deconv3
    {1, 64, 28, 2, 0, false},    // D conv1
    {64, 128, 14, 2, 0, false},  // D conv2
};

std::unique_ptr<Layer> MakeConv(const ConvCase& c) {
  if (c.transposed) return std::make_unique<ConvTranspose2d>(c.in_ch, c.out_ch, 5, c.stride, 2, c.output_padding, false);
  return std::make_unique<Conv2d>(c.in_ch, c.out_ch, 5, c.stride, 2, true);
}

// Multiply-adds of one forward pass for the whole batch.
double ForwardMacs(const ConvCase& c, const Shape& in, const Shape& out) {
  const int64_t batch = in[0];
  const int64_t small_hw = c.transposed ? in[2] * in[3] : out[2] * out[3];
  return static_cast<double>(batch) * c.in_ch * c.out_ch * 25 * small_hw;
}

void BM_Conv(benchmark::State& state) {
  const ConvCase& c = kCases[state.range(0)];
  const bool backward = state.range(1) != 0;
  const int64_t batch = state.range(2);
  std::unique_ptr<Layer> layer = MakeConv(c);
  std::vector<Layer*> layers{layer.get()};
  FlatParameters params(layers);
  Rng rng(3);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  const Shape in{batch, c.in_ch, c.in_hw, c.in_hw};
  const Shape out = layer->OutputShape(in);
  const Tensor x = Random(in, 4), dy = Random(out, 5);
  Context ctx;
  ActivationCache cache;
  layer->Forward(ctx, x, &cache);
  for (auto _ : state) {
    if (backward) {
      benchmark::DoNotOptimize(layer->Backward(ctx, dy, cache, /*want_input_grad=*/true).data());
    } else {
      benchmark::DoNotOptimize(layer->Forward(ctx, x, &cache).data());
    }
  }
  // Backward does the input gradient and the weight gradient: twice the forward MACs.
  SetFlops(state, 2.0 * ForwardMacs(c, in, out) * (backward ? 2.0 : 1.0));
  state.SetLabel(std::string(c.transposed ? "convT " : "conv ") + in.ToString() + "->" + out.ToString() +
                 (backward ? " bwd" : " fwd"));
}
BENCHMARK(BM_Conv)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}, {64}})
    ->ArgNames({"layer", "bwd", "batch"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
