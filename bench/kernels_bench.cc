// GFLOP/s of every matrix product of the DCGAN, per layer and pass (forward,
// backward-data, backward-weights), side by side for kernels x precision, and the
// matrix-product time per sample that one GAN step spends (how often the step runs each
// pass is below). One thread. Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
// best of --repeats runs of at least --min-time seconds each: on a shared machine, time
// slices lost to other processes then do not count (their cache pollution still does).
//
//   build/bin/gantry-bench-kernels                       # eigen/fp32, onednn/fp32, onednn/bf16
//   build/bin/gantry-bench-kernels --kernels onednn --precision bf16,fp16 --batch 256
//   build/bin/gantry-bench-kernels --kernels onednn --precision bf16 --conv-route native,rounded-fp32
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"
#include "worker/tensor/tensor.h"
#if GANTRY_HAVE_ONEDNN
#include "worker/tensor/onednn/onednn_backend.h"
#endif

namespace gantry {
namespace {

Tensor Random(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::Zeros(s);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.Uniform() - 0.5);
  return t;
}

struct Column {
  std::string kernels;
  MathPrecision precision;
  Backend* backend;
  std::string route = "auto";  // oneDNN's convolution route: auto, or one forced for comparison
  std::string label() const {
    return kernels + "/" + std::string(MathPrecisionName(precision)) + (route == "auto" ? "" : "/" + route);
  }
  // Makes the process-wide route setting this column's.
  void Select() const {
#if GANTRY_HAVE_ONEDNN
    std::optional<ConvRoute> forced;
    for (ConvRoute r :
         {ConvRoute::kNative, ConvRoute::kRoundedFp32, ConvRoute::kReference, ConvRoute::kBatchAsChannels,
          ConvRoute::kLowered, ConvRoute::kOneOutput}) {
      if (route == ConvRouteName(r)) forced = r;
    }
    OnednnBackend::ForceConvRoute(forced);
#endif
  }
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One pass of one layer: what it runs and how often a GAN step runs it.
struct Pass {
  std::string layer, pass;
  double flops;
  int per_step;  // calls per training step (ComputeGanGradients)
  std::function<void(Backend&, MathPrecision)> run;
  bool is_conv = false;
  ConvProblem problem;
  ConvOp op = ConvOp::kForward;
};

// The three passes of a convolution layer. A Conv2d layer runs its problem's ops as
// named; a ConvTranspose2d layer's forward is the problem's backward-data, its
// backward-data the problem's forward (see worker/tensor/conv_problem.h).
void AddConvLayer(std::vector<Pass>& out, const std::string& name, ConvProblem p, bool transposed,
                  const int per_step[3]) {
  // Inputs stay untouched (outputs go elsewhere), so values cannot drift into
  // denormals or overflow over repeated calls.
  const Tensor x = Random(Shape{p.batch * p.in_image_size()}, 1), dx = Tensor::Zeros(x.shape());
  const Tensor w = Random(Shape{p.weight_size()}, 2), dw = Tensor::Zeros(w.shape());
  const Tensor dy = Random(Shape{p.batch * p.out_image_size()}, 3), y = Tensor::Zeros(dy.shape());
  auto op = [=](ConvOp which) {
    return [=](Backend& be, MathPrecision prec) {
      ConvProblem q = p;
      q.precision = prec;
      if (which == ConvOp::kForward) be.ConvForward(q, x.data(), w.data(), y.data());
      if (which == ConvOp::kBackwardData) be.ConvBackwardData(q, dy.data(), w.data(), dx.data());
      if (which == ConvOp::kBackwardWeights) be.ConvBackwardWeights(q, x.data(), dy.data(), dw.data());
    };
  };
  const ConvOp fwd = transposed ? ConvOp::kBackwardData : ConvOp::kForward;
  const ConvOp bwd = transposed ? ConvOp::kForward : ConvOp::kBackwardData;
  const double flops = 2.0 * p.macs();
  out.push_back({name, "forward", flops, per_step[0], op(fwd), true, p, fwd});
  out.push_back({name, "backward-data", flops, per_step[1], op(bwd), true, p, bwd});
  out.push_back({name, "backward-weights", flops, per_step[2], op(ConvOp::kBackwardWeights), true, p,
                 ConvOp::kBackwardWeights});
}

// A Linear(in -> out) layer on n rows: y = x W^T, dx = dy W, dW += dy^T x.
void AddLinearLayer(std::vector<Pass>& out, const std::string& name, int64_t n, int64_t in, int64_t outf,
                    const int per_step[3]) {
  const Tensor x = Random(Shape{n, in}, 4), w = Random(Shape{outf, in}, 5), dy = Random(Shape{n, outf}, 6);
  const Tensor dx = Tensor::Zeros(x.shape()), dw = Tensor::Zeros(w.shape()), y = Tensor::Zeros(dy.shape());
  const double flops = 2.0 * static_cast<double>(n * in * outf);
  auto gemm = [](const std::string& layer, const char* pass, double f, int calls,
                 std::function<void(Backend&, MathPrecision)> run) {
    Pass p;
    p.layer = layer;
    p.pass = pass;
    p.flops = f;
    p.per_step = calls;
    p.run = std::move(run);
    return p;
  };
  out.push_back(gemm(name, "forward", flops, per_step[0], [=](Backend& be, MathPrecision p) {
    be.Gemm(p, false, true, n, outf, in, 1.0f, x.data(), in, w.data(), in, 0.0f, y.data(), outf);
  }));
  out.push_back(gemm(name, "backward-data", flops, per_step[1], [=](Backend& be, MathPrecision p) {
    be.Gemm(p, false, false, n, in, outf, 1.0f, dy.data(), outf, w.data(), in, 0.0f, dx.data(), in);
  }));
  out.push_back(gemm(name, "backward-weights", flops, per_step[2], [=](Backend& be, MathPrecision p) {
    be.Gemm(p, true, false, outf, in, n, 1.0f, dy.data(), outf, x.data(), in, 1.0f, dw.data(), in);
  }));
}

ConvProblem Conv(int64_t n, int64_t c, int64_t o, int64_t hw, int64_t stride) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = hw, .in_width = hw,
                     .out_height = ConvOutSize(hw, 5, stride, 2), .out_width = ConvOutSize(hw, 5, stride, 2),
                     .kernel = 5, .stride = stride, .padding = 2};
}

// The DCGAN's layers. Calls per step (ComputeGanGradients): G runs forward,
// backward-weights and (but for its first layer) backward-data once; D runs forward
// twice (real, fake), backward-weights twice, and backward-data three times (real, fake,
// and the generator's tape through D(fake)) but once for its first layer (that tape only).
std::vector<Pass> DcganPasses(int64_t n) {
  const int g_first[3] = {1, 0, 1}, g[3] = {1, 1, 1}, d_first[3] = {2, 1, 2}, d[3] = {2, 3, 2};
  std::vector<Pass> passes;
  AddLinearLayer(passes, "G linear 100->12544", n, 100, 12544, g_first);
  AddConvLayer(passes, "G convT 256->128 7->7", Conv(n, 128, 256, 7, 1), true, g);
  AddConvLayer(passes, "G convT 128->64 7->14", Conv(n, 64, 128, 14, 2), true, g);
  AddConvLayer(passes, "G convT 64->1 14->28", Conv(n, 1, 64, 28, 2), true, g);
  AddConvLayer(passes, "D conv 1->64 28->14", Conv(n, 1, 64, 28, 2), false, d_first);
  AddConvLayer(passes, "D conv 64->128 14->7", Conv(n, 64, 128, 14, 2), false, d);
  AddLinearLayer(passes, "D linear 6272->1", n, 6272, 1, d);
  return passes;
}

// Seconds per call: the best of `repeats` runs, each looping for at least min_time.
double TimeCall(const std::function<void()>& call, int repeats, double min_time) {
  call();  // warm-up: builds cached primitives, grows scratch buffers
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const double t0 = ThreadCpuSeconds();
    int64_t calls = 0;
    double elapsed = 0.0;
    do {
      call();
      ++calls;
      elapsed = ThreadCpuSeconds() - t0;
    } while (elapsed < min_time);
    best = std::min(best, elapsed / static_cast<double>(calls));
  }
  return best;
}

void PrintImplementations(const std::vector<Pass>& passes, const std::vector<Column>& columns) {
#if GANTRY_HAVE_ONEDNN
  std::printf("\nWhat runs the convolutions (oneDNN's kernel names, and the route):\n");
  for (const Pass& p : passes) {
    if (!p.is_conv) continue;
    std::string line;
    for (const Column& c : columns) {
      if (c.kernels != "onednn") continue;
      ConvProblem q = p.problem;
      q.precision = c.precision;
      c.Select();
      line += "  " + c.label() + ": " + OnednnBackend::ConvImplementation(q, p.op);
    }
    if (!line.empty()) std::printf("%-24s %-17s%s\n", p.layer.c_str(), p.pass.c_str(), line.c_str());
  }
#endif
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-kernels: GFLOP/s of the DCGAN's matrix products per layer and pass"};
  std::vector<std::string> kernels, precisions;
  int64_t batch = 64;
  int repeats = 3;
  double min_time = 0.2;
  app.add_option("--kernels", kernels, "backends, comma separated (eigen, onednn)")->delimiter(',');
  app.add_option("--precision", precisions, "operand precisions, comma separated (fp32, bf16, fp16)")
      ->delimiter(',');
  app.add_option("--batch", batch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed runs per cell (the best counts)")->check(CLI::PositiveNumber);
  app.add_option("--min-time", min_time, "seconds per timed run")->check(CLI::PositiveNumber);
  std::vector<std::string> routes{"auto"};
  app.add_option("--conv-route", routes,
                 "oneDNN columns, comma separated: auto (the measured choice), or forced native, rounded-fp32, "
                 "reference, batch-as-channels (backward-weights only), lowered")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "native", "rounded-fp32", "reference", "batch-as-channels", "lowered", "one-output"}));
  CLI11_PARSE(app, argc, argv);

  std::vector<Column> columns;
  if (kernels.empty() && precisions.empty()) {
    for (auto [k, p] : {std::pair{"eigen", MathPrecision::kFp32}, std::pair{"onednn", MathPrecision::kFp32},
                        std::pair{"onednn", MathPrecision::kBf16}}) {
      if (Backend* be = FindBackend(k)) columns.push_back({k, p, be});
    }
  } else {
    if (kernels.empty()) kernels = BuiltBackendNames();
    if (precisions.empty()) precisions = {"fp32"};
    for (const std::string& k : kernels) {
      Backend* be = FindBackend(k);
      if (be == nullptr) {
        std::fprintf(stderr, "--kernels %s: not built in; this build has the ones listed by --help\n", k.c_str());
        return 2;
      }
      for (const std::string& p : precisions) {
        const std::optional<MathPrecision> prec = ParseMathPrecision(p);
        if (!prec) {
          std::fprintf(stderr, "--precision %s: expected fp32, bf16 or fp16\n", p.c_str());
          return 2;
        }
        for (const std::string& r : k == "onednn" ? routes : std::vector<std::string>{"auto"}) {
          columns.push_back({k, *prec, be, r});
        }
      }
    }
  }

  const std::vector<Pass> passes = DcganPasses(batch);
  std::printf("DCGAN matrix products at batch %ld, GFLOP/s, 1 thread, best of %d runs of >= %.2f s CPU time\n",
              static_cast<long>(batch), repeats, min_time);
#if GANTRY_HAVE_ONEDNN
  std::printf("%s\n", OnednnDescription().c_str());
#endif
  std::printf("%-24s %-17s %5s", "layer", "pass", "calls");
  for (const Column& c : columns) std::printf(" %14s", c.label().c_str());
  std::printf("\n");
  std::vector<double> step_seconds(columns.size(), 0.0);
  for (const Pass& p : passes) {
    std::printf("%-24s %-17s %5d", p.layer.c_str(), p.pass.c_str(), p.per_step);
    for (size_t j = 0; j < columns.size(); ++j) {
      const Column& c = columns[j];
      c.Select();
      const double s = TimeCall([&] { p.run(*c.backend, c.precision); }, repeats, min_time);
      step_seconds[j] += s * p.per_step;
      std::printf(" %14.1f", p.flops / s * 1e-9);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  std::printf("%-48s", "matrix-product ms per sample of one GAN step");
  for (double s : step_seconds) std::printf(" %14.3f", s * 1e3 / static_cast<double>(batch));
  std::printf("\n%-48s", "  -> samples/s if nothing else took time");
  for (double s : step_seconds) std::printf(" %14.1f", static_cast<double>(batch) / s);
  std::printf("\n");
  PrintImplementations(passes, columns);
  return 0;
}
