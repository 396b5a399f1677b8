// GFLOP/s of every matrix product of the DCGAN (or of Pix2Pix's PatchGAN discriminator,
// --net patchgan), per layer and pass (forward, backward-data, backward-weights), side by
// side for kernels x precision, and the matrix-product time per sample that one GAN step
// spends (how often the step runs each pass is below). One thread. Times are this thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID), best of --repeats runs of at least --min-time seconds
// each: on a shared machine, time slices lost to other processes then do not count (their
// cache pollution still does).
//
//   build/bin/gantry-bench-kernels                       # eigen/fp32, onednn/fp32, onednn/bf16
//   build/bin/gantry-bench-kernels --kernels onednn --precision bf16,fp16 --batch 256
//   build/bin/gantry-bench-kernels --kernels onednn --precision bf16 --conv-route native,rounded-fp32
//   build/bin/gantry-bench-kernels --net patchgan --image-size 256 --batch 8 --kernels onednn
//                                  --conv-route auto,native,winograd
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "runspec/model_config.h"
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
          ConvRoute::kLowered, ConvRoute::kOneOutput, ConvRoute::kWinograd}) {
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

// PatchGAN's 4x4 convolutions (worker/models/pix2pix.cc: three stride-2 ones, then two
// stride-1 ones with padding 1, the last to one logit channel) on an image_size input of
// the concatenated pair (condition and frame). Calls per step as for the DCGAN's D.
std::vector<Pass> PatchGanPasses(int64_t n, int64_t image_size, int64_t ndf) {
  constexpr int64_t kPairChannels = Pix2pixConfig::kInputChannels + Pix2pixConfig::kOutputChannels;
  const int d_first[3] = {2, 1, 2}, d[3] = {2, 3, 2};
  auto conv4 = [n](int64_t c, int64_t o, int64_t hw, int64_t stride) {
    const int64_t out = ConvOutSize(hw, 4, stride, 1);
    return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = hw, .in_width = hw,
                       .out_height = out, .out_width = out, .kernel = 4, .stride = stride, .padding = 1};
  };
  auto name = [](int64_t c, int64_t o, int64_t hw, int64_t out) {
    return "D conv " + std::to_string(c) + "->" + std::to_string(o) + " " + std::to_string(hw) + "->" +
           std::to_string(out);
  };
  std::vector<Pass> passes;
  int64_t hw = image_size, c = kPairChannels;
  const std::pair<int64_t, int64_t> out_and_stride[] = {{ndf, 2}, {2 * ndf, 2}, {4 * ndf, 2}, {8 * ndf, 1}, {1, 1}};
  for (auto [o, stride] : out_and_stride) {
    const ConvProblem p = conv4(c, o, hw, stride);
    AddConvLayer(passes, name(c, o, hw, p.out_height), p, false, c == kPairChannels ? d_first : d);
    hw = p.out_height;
    c = o;
  }
  return passes;
}

// The image DCGAN's 4x4 layers (worker/models/image_dcgan.h, ngf = ndf = 64, 3 channels)
// at image_size: G's first transposed convolution (the adjoint of widths[0]x4x4 ->
// noise x1x1), its stride-2 ones, D's stride-2 ones and its 4x4 -> 1x1 logit. Calls per
// step as for the DCGAN.
std::vector<Pass> ImageDcganPasses(int64_t n, int64_t image_size) {
  const int g_first[3] = {1, 0, 1}, g[3] = {1, 1, 1}, d_first[3] = {2, 1, 2}, d[3] = {2, 3, 2};
  const std::vector<int64_t> w = ImageDcganWidths(64, image_size);
  auto conv4 = [n](int64_t c, int64_t o, int64_t hw, int64_t stride, int64_t pad) {
    const int64_t out = ConvOutSize(hw, 4, stride, pad);
    return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = hw, .in_width = hw,
                       .out_height = out, .out_width = out, .kernel = 4, .stride = stride, .padding = pad};
  };
  auto name = [](const char* what, int64_t c, int64_t o, int64_t from, int64_t to) {
    return std::string(what) + " " + std::to_string(c) + "->" + std::to_string(o) + " " + std::to_string(from) +
           "->" + std::to_string(to);
  };
  std::vector<Pass> passes;
  // G: a transposed convolution from c x side to o x 2 side is the adjoint of o x 2 side -> c x side.
  AddConvLayer(passes, name("G convT", 100, w[0], 1, 4), conv4(w[0], 100, 4, 1, 0), true, g_first);
  int64_t side = 4;
  for (size_t i = 1; i < w.size(); ++i, side *= 2) {
    AddConvLayer(passes, name("G convT", w[i - 1], w[i], side, 2 * side), conv4(w[i], w[i - 1], 2 * side, 2, 1), true,
                 g);
  }
  AddConvLayer(passes, name("G convT", w.back(), 3, side, 2 * side), conv4(3, w.back(), 2 * side, 2, 1), true, g);
  // D, from the image end.
  int64_t c = 3;
  side = image_size;
  for (auto it = w.rbegin(); it != w.rend(); ++it, side /= 2) {
    AddConvLayer(passes, name("D conv", c, *it, side, side / 2), conv4(c, *it, side, 2, 1), false,
                 c == 3 ? d_first : d);
    c = *it;
  }
  AddConvLayer(passes, name("D conv", c, 1, 4, 1), conv4(c, 1, 4, 1, 0), false, d);
  return passes;
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

struct Settings {
  std::vector<std::string> kernels, precisions;
  int64_t batch = 64;
  std::string net = "dcgan";
  int64_t image_size = 256, ndf = 64;
  int repeats = 3;
  double min_time = 0.2;
  std::vector<std::string> routes{"auto"};
};

void AddFlags(CLI::App& app, Settings& s) {
  app.add_option("--kernels", s.kernels, "backends, comma separated (eigen, onednn)")->delimiter(',');
  app.add_option("--precision", s.precisions, "operand precisions, comma separated (fp32, bf16, fp16)")
      ->delimiter(',');
  app.add_option("--batch", s.batch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--net", s.net, "whose layers: dcgan, patchgan (Pix2Pix's discriminator), or image-dcgan (at "
                 "--image-size 32, 64 or 128)")
      ->check(CLI::IsMember({"dcgan", "patchgan", "image-dcgan"}));
  app.add_option("--image-size", s.image_size, "patchgan: input side in pixels, a multiple of 8 from 32")
      ->check(CLI::Range(int64_t{32}, int64_t{4096}));
  app.add_option("--ndf", s.ndf, "patchgan: filters of the first layer")->check(CLI::PositiveNumber);
  app.add_option("--repeats", s.repeats, "timed runs per cell (the best counts)")->check(CLI::PositiveNumber);
  app.add_option("--min-time", s.min_time, "seconds per timed run")->check(CLI::PositiveNumber);
  app.add_option("--conv-route", s.routes,
                 "oneDNN columns, comma separated: auto (the measured choice), or forced native, rounded-fp32, "
                 "reference, batch-as-channels (backward-weights only), lowered, one-output, winograd (4x4 stride 1 "
                 "only; elsewhere oneDNN's own kernels)")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"auto", "native", "rounded-fp32", "reference", "batch-as-channels", "lowered", "one-output", "winograd"}));
}

// The table's columns: kernels x precision (x route for onednn), or, with neither
// flag, eigen/fp32, onednn/fp32 and onednn/bf16 where built. Unset, with the reason on
// stderr, for kernels this build lacks or a precision it does not know.
std::optional<std::vector<Column>> ChooseColumns(Settings& s) {
  std::vector<Column> columns;
  if (s.kernels.empty() && s.precisions.empty()) {
    for (auto [k, p] : {std::pair{"eigen", MathPrecision::kFp32}, std::pair{"onednn", MathPrecision::kFp32},
                        std::pair{"onednn", MathPrecision::kBf16}}) {
      if (Backend* be = FindBackend(k)) columns.push_back({k, p, be});
    }
    return columns;
  }
  if (s.kernels.empty()) s.kernels = BuiltBackendNames();
  if (s.precisions.empty()) s.precisions = {"fp32"};
  for (const std::string& k : s.kernels) {
    Backend* be = FindBackend(k);
    if (be == nullptr) {
      std::fprintf(stderr, "--kernels %s: not built in; this build has the ones listed by --help\n", k.c_str());
      return std::nullopt;
    }
    for (const std::string& p : s.precisions) {
      const std::optional<MathPrecision> prec = ParseMathPrecision(p);
      if (!prec) {
        std::fprintf(stderr, "--precision %s: expected fp32, bf16 or fp16\n", p.c_str());
        return std::nullopt;
      }
      for (const std::string& r : k == "onednn" ? s.routes : std::vector<std::string>{"auto"}) {
        columns.push_back({k, *prec, be, r});
      }
    }
  }
  return columns;
}

// The GFLOP/s of every pass in every column, then what one GAN step spends per sample.
void PrintTable(const Settings& s, const std::vector<Pass>& passes, const std::vector<Column>& columns) {
  std::printf("%-24s %-17s %5s", "layer", "pass", "calls");
  for (const Column& c : columns) std::printf(" %14s", c.label().c_str());
  std::printf("\n");
  std::vector<double> step_seconds(columns.size(), 0.0);
  for (const Pass& p : passes) {
    std::printf("%-24s %-17s %5d", p.layer.c_str(), p.pass.c_str(), p.per_step);
    for (size_t j = 0; j < columns.size(); ++j) {
      const Column& c = columns[j];
      c.Select();
      const double seconds = TimeCall([&] { p.run(*c.backend, c.precision); }, s.repeats, s.min_time);
      step_seconds[j] += seconds * p.per_step;
      std::printf(" %14.1f", p.flops / seconds * 1e-9);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  std::printf("%-48s", s.net == "dcgan" ? "matrix-product ms per sample of one GAN step"
                                        : "D's convolution ms per sample of one GAN step");
  for (double seconds : step_seconds) std::printf(" %14.3f", seconds * 1e3 / static_cast<double>(s.batch));
  std::printf("\n%-48s", "  -> samples/s if nothing else took time");
  for (double seconds : step_seconds) std::printf(" %14.1f", static_cast<double>(s.batch) / seconds);
  std::printf("\n");
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-kernels: GFLOP/s of the DCGAN's (or PatchGAN's) matrix products per layer and pass"};
  Settings s;
  AddFlags(app, s);
  CLI11_PARSE(app, argc, argv);
  const std::optional<std::vector<Column>> columns = ChooseColumns(s);
  if (!columns) return 2;
  if (s.net == "image-dcgan" && !ImageDcganImageSizeProblem(s.image_size).empty()) {
    std::fprintf(stderr, "--image-size %ld: %s\n", static_cast<long>(s.image_size),
                 ImageDcganImageSizeProblem(s.image_size).c_str());
    return 2;
  }
  if (s.net == "patchgan" && s.image_size % 8 != 0) {
    std::fprintf(stderr, "--image-size %ld: PatchGAN needs a multiple of 8 (three stride-2 layers)\n",
                 static_cast<long>(s.image_size));
    return 2;
  }
  const std::vector<Pass> passes =
      s.net == "dcgan"         ? DcganPasses(s.batch)
      : s.net == "image-dcgan" ? ImageDcganPasses(s.batch, s.image_size)
                               : PatchGanPasses(s.batch, s.image_size, s.ndf);
  const std::string size = " (" + std::to_string(s.image_size) + " px)";
  const std::string what = s.net == "dcgan" ? "DCGAN" : s.net == "image-dcgan" ? "image DCGAN" + size : "PatchGAN" + size;
  std::printf("%s matrix products at batch %ld, GFLOP/s, 1 thread, best of %d runs of >= %.2f s CPU time\n",
              what.c_str(), static_cast<long>(s.batch), s.repeats, s.min_time);
#if GANTRY_HAVE_ONEDNN
  std::printf("%s\n", OnednnDescription().c_str());
#endif
  PrintTable(s, passes, *columns);
  PrintImplementations(passes, *columns);
  return 0;
}
