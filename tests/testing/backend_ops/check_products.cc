// The GEMM and the convolutions against double references on the same operands rounded
// to the row's precision ("product": only the summation differs) and, for 16-bit rows,
// on the fp32 operands ("product vs fp32": within the format's rounding bound). A 16-bit
// result must also sit much closer to the first than to the second (proof that the
// operands were rounded), on host backends everywhere and on devices where the
// tensor cores' accumulation slack leaves room to tell (bf16 GEMMs with k >= 64).
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/reference_products.h"
#include "tests/testing/backend_ops/values.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {
namespace {

// One output's references in double: operands rounded to the row's precision, fp32
// operands, and the same over |operands| (the magnitude the bounds scale with).
struct ProductReference {
  std::vector<double> at_precision, fp32, magnitude;
};

void ExpectProduct(const OpRun& run, const Tensor& actual, const ProductReference& ref, bool rounding_must_show,
                   const std::string& where) {
  const Shape& shape = actual.shape();
  const Tensor magnitude = Floats(ref.magnitude, shape), at_precision = Floats(ref.at_precision, shape);
  run.Expect("product", actual, at_precision, magnitude, where);
  if (run.precision() == MathPrecision::kFp32) return;
  const Tensor fp32 = Floats(ref.fp32, shape);
  run.Expect("product vs fp32", actual, fp32, magnitude, where);
  if (rounding_must_show) ExpectRoundedOperands(actual, at_precision, fp32, magnitude);
}

// --- GEMM ------------------------------------------------------------------------------

struct GemmOperands {
  Tensor a, b, c0;
  int64_t lda, ldb, ldc;
};

// Random A, B and C with `pad` extra elements per row. Where beta == 0, C's elements
// inside the matrix are NaN: the GEMM must not read them.
GemmOperands MakeGemmOperands(const GemmShape& s) {
  const int64_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
  const int64_t b_rows = s.trans_b ? s.n : s.k, b_cols = s.trans_b ? s.k : s.n;
  GemmOperands o{RandomTensor(Shape{std::max<int64_t>(a_rows, 1), a_cols + s.pad}, 1),
                 RandomTensor(Shape{std::max<int64_t>(b_rows, 1), b_cols + s.pad}, 2),
                 RandomTensor(Shape{s.m, s.n + s.pad}, 3),
                 a_cols + s.pad,
                 b_cols + s.pad,
                 s.n + s.pad};
  if (s.beta == 0.0f) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) o.c0.data()[i * o.ldc + j] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  return o;
}

std::vector<double> GemmReference(const GemmShape& s, const GemmOperands& o, MathPrecision rounding, bool magnitude) {
  std::vector<double> c = Doubles(o.c0, MathPrecision::kFp32, magnitude);  // C itself is never rounded
  const double alpha = magnitude ? std::fabs(s.alpha) : s.alpha, beta = magnitude ? std::fabs(s.beta) : s.beta;
  ReferenceGemm(s, alpha, Doubles(o.a, rounding, magnitude), Doubles(o.b, rounding, magnitude), beta, c);
  if (magnitude) {  // C's padding must come back untouched: magnitude 0 asks for its exact value
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = s.n; j < o.ldc; ++j) c[static_cast<size_t>(i * o.ldc + j)] = 0.0;
    }
  }
  return c;
}

std::string DescribeProduct(const GemmShape& s) {
  return "ta=" + std::to_string(s.trans_a) + " tb=" + std::to_string(s.trans_b) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) + " alpha=" + std::to_string(s.alpha) +
         " beta=" + std::to_string(s.beta) + " pad=" + std::to_string(s.pad);
}

// --- convolutions ------------------------------------------------------------------------

// One convolution's operands (seeds as the oneDNN and CUDA tests drew them) and the
// weight gradient's starting value (ConvBackwardWeights accumulates).
struct ConvOperands {
  ConvProblem p;
  Tensor x, w, dy, dw0;
};

ConvOperands MakeConvOperands(ConvProblem p, MathPrecision precision) {
  p.precision = precision;
  return {p, RandomTensor(Shape{p.batch, p.in_channels, p.in_height, p.in_width}, 1),
          RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 2),
          RandomTensor(Shape{p.batch, p.out_channels, p.out_height, p.out_width}, 3),
          RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 4)};
}

using ConvPass = std::vector<double> (*)(const ConvProblem&, const std::vector<double>&, const std::vector<double>&);

// `pass` over (a, b) rounded to `rounding` (or as magnitudes), remembered for the process:
// the operands follow from the problem, and the oneDNN tests run the same rows once per
// route.
const std::vector<double>& Exact(ConvPass pass, ConvProblem p, const Tensor& a, const Tensor& b,
                                 MathPrecision rounding, bool magnitude) {
  p.precision = MathPrecision::kFp32;
  using Key = std::tuple<ConvPass, std::string, MathPrecision, bool>;
  static std::mutex mutex;
  static std::map<Key, std::vector<double>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const Key key{pass, p.ToString(), rounding, magnitude};
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, pass(p, Doubles(a, rounding, magnitude), Doubles(b, rounding, magnitude))).first;
  }
  return it->second;
}

// `pass` over (a, b) at the row's precision, at fp32 and over magnitudes, plus `start`
// (the accumulator's old value, never rounded) where there is one.
ProductReference PassReference(ConvPass pass, const ConvProblem& p, const Tensor& a, const Tensor& b,
                               const Tensor* start = nullptr) {
  ProductReference r{Exact(pass, p, a, b, p.precision, false), Exact(pass, p, a, b, MathPrecision::kFp32, false),
                     Exact(pass, p, a, b, MathPrecision::kFp32, true)};
  if (start != nullptr) {
    for (int64_t i = 0; i < start->numel(); ++i) {
      const auto j = static_cast<size_t>(i);
      const float s = start->data()[i];
      r.at_precision[j] += s, r.fp32[j] += s, r.magnitude[j] += std::fabs(s);
    }
  }
  return r;
}

ProductReference ForwardReference(const ConvOperands& c) { return PassReference(&ReferenceConvForward, c.p, c.x, c.w); }
ProductReference BackwardDataReference(const ConvOperands& c) {
  return PassReference(&ReferenceConvBackwardData, c.p, c.dy, c.w);
}
ProductReference BackwardWeightsReference(const ConvOperands& c) {
  return PassReference(&ReferenceConvBackwardWeights, c.p, c.x, c.dy, &c.dw0);
}

// Runs `body(operands)` for every problem of the row.
template <typename Body>
void ForEachProblem(OpRun& run, const Body& body) {
  for (const ConvProblem& problem : run.shapes<ConvProblem>()) {
    const ConvOperands c = MakeConvOperands(problem, run.precision());
    SCOPED_TRACE(c.p.ToString());
    body(c);
  }
}

// The 16-bit rounding must show in a convolution's result on host backends; the CUDA
// tests never asked it of the tensor cores' convolutions.
bool ConvRoundingMustShow(const OpRun& run) { return !run.on_device(); }

}  // namespace

void CheckGemm(OpRun& run) {
  for (const GemmShape& s : run.shapes<GemmShape>()) {
    SCOPED_TRACE(DescribeProduct(s));
    const GemmOperands o = MakeGemmOperands(s);
    const Tensor a = run.Put(o.a), b = run.Put(o.b), c = run.Put(o.c0);
    run.backend().Gemm(run.precision(), s.trans_a, s.trans_b, s.m, s.n, s.k, s.alpha, a.data(), o.lda, b.data(), o.ldb,
                       s.beta, c.data(), o.ldc);
    ProductReference ref{
        {}, GemmReference(s, o, MathPrecision::kFp32, false), GemmReference(s, o, MathPrecision::kFp32, true)};
    ref.at_precision = run.precision() == MathPrecision::kFp32 ? ref.fp32 : GemmReference(s, o, run.precision(), false);
    const bool must_show = s.k > 0 && (!run.on_device() || (run.precision() == MathPrecision::kBf16 && s.k >= 64));
    ExpectProduct(run, OpRun::Get(c), ref, must_show, "C");
  }
}

void CheckConvForward(OpRun& run) {
  ForEachProblem(run, [&](const ConvOperands& c) {
    const Tensor y = run.Poisoned(c.dy.shape());
    run.backend().ConvForward(c.p, run.Put(c.x).data(), run.Put(c.w).data(), y.data());
    ExpectProduct(run, OpRun::Get(y), ForwardReference(c), ConvRoundingMustShow(run), "y");
  });
}

void CheckConvBackwardData(OpRun& run) {
  ForEachProblem(run, [&](const ConvOperands& c) {
    const Tensor dx = run.Poisoned(c.x.shape());
    run.backend().ConvBackwardData(c.p, run.Put(c.dy).data(), run.Put(c.w).data(), dx.data());
    ExpectProduct(run, OpRun::Get(dx), BackwardDataReference(c), ConvRoundingMustShow(run), "dx");
  });
}

void CheckConvBackwardWeights(OpRun& run) {
  ForEachProblem(run, [&](const ConvOperands& c) {
    const Tensor dw = run.Put(c.dw0);
    run.backend().ConvBackwardWeights(c.p, run.Put(c.x).data(), run.Put(c.dy).data(), dw.data());
    ExpectProduct(run, OpRun::Get(dw), BackwardWeightsReference(c), ConvRoundingMustShow(run), "dw (accumulated)");
  });
}

// dw += grad(x, dy), dx = the input gradient of dy: the references, and exactly what
// ConvBackwardWeights then ConvBackwardData give on the same backend.
void CheckConvBackward(OpRun& run) {
  ForEachProblem(run, [&](const ConvOperands& c) {
    const Tensor x = run.Put(c.x), dy = run.Put(c.dy), w = run.Put(c.w);
    const Tensor dx = run.Poisoned(c.x.shape()), dw = run.Put(c.dw0);
    run.backend().ConvBackward(c.p, x.data(), dy.data(), w.data(), dx.data(), dw.data());
    const Tensor dx_host = OpRun::Get(dx), dw_host = OpRun::Get(dw);
    ExpectProduct(run, dx_host, BackwardDataReference(c), ConvRoundingMustShow(run), "dx");
    ExpectProduct(run, dw_host, BackwardWeightsReference(c), ConvRoundingMustShow(run), "dw (accumulated)");
    const Tensor dx_apart = run.Poisoned(c.x.shape()), dw_apart = run.Put(c.dw0);
    run.backend().ConvBackwardWeights(c.p, x.data(), dy.data(), dw_apart.data());
    run.backend().ConvBackwardData(c.p, dy.data(), w.data(), dx_apart.data());
    run.Expect("separate passes", dx_host, OpRun::Get(dx_apart), Tensor(), "dx");
    run.Expect("separate passes", dw_host, OpRun::Get(dw_apart), Tensor(), "dw");
  });
}

// The transposed layer's backward from its output gradient g (the convolution's input,
// c.x here) and its input x (the convolution's output side, c.dy): dw += grad(g, x),
// dx = ConvForward(g, w); and exactly those two passes run apart.
void CheckConvTransposeBackward(OpRun& run) {
  ForEachProblem(run, [&](const ConvOperands& c) {
    const Tensor g = run.Put(c.x), x = run.Put(c.dy), w = run.Put(c.w);
    const Tensor dx = run.Poisoned(c.dy.shape()), dw = run.Put(c.dw0);
    run.backend().ConvTransposeBackward(c.p, g.data(), x.data(), w.data(), dx.data(), dw.data());
    const Tensor dx_host = OpRun::Get(dx), dw_host = OpRun::Get(dw);
    ExpectProduct(run, dx_host, ForwardReference(c), ConvRoundingMustShow(run), "dx");
    ExpectProduct(run, dw_host, BackwardWeightsReference(c), ConvRoundingMustShow(run), "dw (accumulated)");
    const Tensor dx_apart = run.Poisoned(c.dy.shape()), dw_apart = run.Put(c.dw0);
    run.backend().ConvBackwardWeights(c.p, g.data(), x.data(), dw_apart.data());
    run.backend().ConvForward(c.p, g.data(), w.data(), dx_apart.data());
    run.Expect("separate passes", dx_host, OpRun::Get(dx_apart), Tensor(), "dx");
    run.Expect("separate passes", dw_host, OpRun::Get(dw_apart), Tensor(), "dw");
  });
}

}  // namespace gantry::testing
