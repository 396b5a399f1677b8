// Batch normalisation on [n, c, hw] layouts against the formulas in double: the
// statistics (also of data whose mean is 1000x its spread, where E[x^2] - E[x]^2 in fp32
// would lose the variance), apply, backward (with and without dx) and the activation
// fusions. Apply and the backwards take the reference statistics rounded to fp32, so
// each op is compared alone. The magnitudes are those the CUDA tests derived, the
// gradients' in terms of the incoming gradient's terms.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/backend_ops/activation_reference.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/values.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {
namespace {

constexpr float kEps = 1e-3f;

// A layout's element i lies in channel (i / hw) % c.
struct Channels {
  const Layout& l;
  int64_t operator()(int64_t i) const { return (i / l.hw) % l.c; }
  int64_t elements() const { return l.n * l.c * l.hw; }
  double count() const { return static_cast<double>(l.n * l.hw); }  // elements per channel
};

template <typename Body>
void ForEachLayout(OpRun& run, const Body& body) {
  for (const Layout& l : run.shapes<Layout>()) {
    SCOPED_TRACE(std::to_string(l.n) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw));
    body(l, Shape{l.n, l.c, l.hw}, Shape{l.c});
  }
}

// The batch mean and biased variance per channel in double (two passes), and the
// statistics as a layer hands them to the ops: rounded to fp32.
struct Stats {
  std::vector<double> mean, var;
  Tensor mean32, var32;
  std::vector<double> invstd;  // 1 / sqrt(var32 + eps)
};

Stats ReferenceStats(const Layout& l, const Tensor& x) {
  const Channels ch{l};
  const float* xp = x.data();
  Stats s;
  s.mean.assign(static_cast<size_t>(l.c), 0.0), s.var.assign(static_cast<size_t>(l.c), 0.0);
  for (int64_t i = 0; i < ch.elements(); ++i) s.mean[static_cast<size_t>(ch(i))] += xp[i] / ch.count();
  for (int64_t i = 0; i < ch.elements(); ++i) {
    const double d = xp[i] - s.mean[static_cast<size_t>(ch(i))];
    s.var[static_cast<size_t>(ch(i))] += d * d / ch.count();
  }
  s.mean32 = Floats(s.mean, Shape{l.c}), s.var32 = Floats(s.var, Shape{l.c});
  for (int64_t c = 0; c < l.c; ++c) s.invstd.push_back(1.0 / std::sqrt(double{s.var32.at(c)} + double{kEps}));
  return s;
}

// xhat = (x - mean) / std with the fp32 statistics.
std::vector<double> Normalized(const Layout& l, const Tensor& x, const Stats& s) {
  const Channels ch{l};
  std::vector<double> xhat(static_cast<size_t>(ch.elements()));
  for (int64_t i = 0; i < ch.elements(); ++i) {
    const auto c = static_cast<size_t>(ch(i));
    xhat[static_cast<size_t>(i)] = (x.data()[i] - double{s.mean32.data()[c]}) * s.invstd[c];
  }
  return xhat;
}

// Gradients of y = BatchNormApply(x) given dL/dy = g, whose terms have magnitudes
// g_terms (|g| where g is an input; more where it was computed in fp32 and cancels).
struct BackwardReference {
  std::vector<double> dx, dgamma, dbeta, dx_terms, dgamma_terms, dbeta_terms;
};

BackwardReference Backward(const Layout& l, const std::vector<double>& xhat, const std::vector<double>& g,
                           const std::vector<double>& g_terms, const Stats& s, const Tensor& gamma) {
  const Channels ch{l};
  const auto c_count = static_cast<size_t>(l.c);
  BackwardReference r{{}, std::vector<double>(c_count), std::vector<double>(c_count),
                      {}, std::vector<double>(c_count), std::vector<double>(c_count)};
  for (int64_t i = 0; i < ch.elements(); ++i) {
    const auto c = static_cast<size_t>(ch(i)), j = static_cast<size_t>(i);
    r.dbeta[c] += g[j], r.dgamma[c] += g[j] * xhat[j];
    r.dbeta_terms[c] += g_terms[j], r.dgamma_terms[c] += g_terms[j] * std::fabs(xhat[j]);
  }
  r.dx.resize(g.size()), r.dx_terms.resize(g.size());
  for (int64_t i = 0; i < ch.elements(); ++i) {
    const auto c = static_cast<size_t>(ch(i)), j = static_cast<size_t>(i);
    const double scale = gamma.data()[c] * s.invstd[c];
    r.dx[j] = scale * (g[j] - r.dbeta[c] / ch.count() - xhat[j] * r.dgamma[c] / ch.count());
    r.dx_terms[j] = std::fabs(scale) *
                    (g_terms[j] + r.dbeta_terms[c] / ch.count() + std::fabs(xhat[j]) * r.dgamma_terms[c] / ch.count());
  }
  return r;
}

// The terms of dy * f'(y) as fp32 computes it: 1 - y^2 and y (1 - y) carry y^2's rounding.
double SlopeTerms(Activation f, double y) {
  if (f == Activation::kTanh) return 1.0 + y * y;
  if (f == Activation::kSigmoid) return std::fabs(y) * (1.0 + std::fabs(y));
  return std::fabs(SlopeAtOutput(f, kSlope, y));
}

std::vector<double> Plus(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// The pre-activation y = xhat * gamma + beta.
std::vector<double> Applied(const Layout& l, const std::vector<double>& xhat, const Tensor& gamma, const Tensor& beta) {
  const Channels ch{l};
  std::vector<double> y(xhat.size());
  for (int64_t i = 0; i < ch.elements(); ++i) {
    const auto c = ch(i);
    y[static_cast<size_t>(i)] = xhat[static_cast<size_t>(i)] * gamma.data()[c] + beta.data()[c];
  }
  return y;
}

// The activations' inputs of the fused ops (the CUDA test's draws).
struct FusedInputs {
  Tensor x, dy, gamma, beta;
};
FusedInputs MakeFusedInputs(const Shape& shape, const Shape& channels) {
  return {RandomTensor(shape, 7), RandomTensor(shape, 8), RandomTensor(channels, 9), RandomTensor(channels, 10)};
}

}  // namespace

// Activations (mean 3, spread 2, as the CUDA test) and data with mean 1000 (spread 1).
void CheckBatchNormStats(OpRun& run) {
  ForEachLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    for (const Tensor& x : {Shifted(shape, 1, 2.0f, 3.0f), Shifted(shape, 5, 1.0f, 1000.0f)}) {
      const Stats s = ReferenceStats(l, x);
      const Channels ch{l};
      std::vector<double> mean_abs(static_cast<size_t>(l.c), 0.0);
      for (int64_t i = 0; i < ch.elements(); ++i)
        mean_abs[static_cast<size_t>(ch(i))] += std::fabs(x.data()[i]) / ch.count();
      const Tensor mean = run.Poisoned(channels), var = run.Poisoned(channels);
      run.backend().BatchNormStats(l.n, l.c, l.hw, run.Put(x).data(), mean.data(), var.data());
      const std::string where = "data around " + std::to_string(s.mean[0]);
      run.Expect("mean", OpRun::Get(mean), s.mean32, Floats(mean_abs, channels), where);
      run.Expect("var", OpRun::Get(var), s.var32, s.var32, where);
    }
  });
}

void CheckBatchNormApply(OpRun& run) {
  ForEachLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor x = Shifted(shape, 1, 2.0f, 3.0f), gamma = RandomTensor(channels, 3), beta = RandomTensor(channels, 4);
    const Stats s = ReferenceStats(l, x);
    const std::vector<double> y = Applied(l, Normalized(l, x, s), gamma, beta);
    Tensor beta_full = Tensor::Zeros(shape);
    for (int64_t i = 0; i < x.numel(); ++i) beta_full.data()[i] = beta.data()[Channels{l}(i)];
    const Tensor expected = Floats(y, shape), out = run.Poisoned(shape);
    run.backend().BatchNormApply(l.n, l.c, l.hw, run.Put(x).data(), run.Put(s.mean32).data(), run.Put(s.var32).data(),
                                 kEps, run.Put(gamma).data(), run.Put(beta).data(), out.data());
    run.Expect("y", OpRun::Get(out), expected, SumOfMagnitudes({expected, beta_full}), "y = xhat * gamma + beta");
  });
}

// dgamma and dbeta accumulate onto random starts; dx is overwritten, or null.
void CheckBatchNormBackward(OpRun& run) {
  ForEachLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor x = Shifted(shape, 1, 2.0f, 3.0f), dy = RandomTensor(shape, 2), gamma = RandomTensor(channels, 3);
    const Tensor dgamma0 = RandomTensor(channels, 5), dbeta0 = RandomTensor(channels, 6);
    const Stats s = ReferenceStats(l, x);
    const BackwardReference r = Backward(l, Normalized(l, x, s), Doubles(dy), Magnitudes(dy), s, gamma);
    for (bool want_dx : {true, false}) {
      SCOPED_TRACE(want_dx ? "with dx" : "without dx");
      const Tensor dx = run.Poisoned(shape), dgamma = run.Put(dgamma0), dbeta = run.Put(dbeta0);
      run.backend().BatchNormBackward(l.n, l.c, l.hw, run.Put(x).data(), run.Put(dy).data(), run.Put(s.mean32).data(),
                                      run.Put(s.var32).data(), kEps, run.Put(gamma).data(),
                                      want_dx ? dx.data() : nullptr, dgamma.data(), dbeta.data());
      run.Expect("dgamma, dbeta", OpRun::Get(dgamma), Floats(Plus(r.dgamma, Doubles(dgamma0)), channels),
                 Floats(Plus(r.dgamma_terms, Magnitudes(dgamma0)), channels), "dgamma (accumulated)");
      run.Expect("dgamma, dbeta", OpRun::Get(dbeta), Floats(Plus(r.dbeta, Doubles(dbeta0)), channels),
                 Floats(Plus(r.dbeta_terms, Magnitudes(dbeta0)), channels), "dbeta (accumulated)");
      if (want_dx) run.Expect("dx", OpRun::Get(dx), Floats(r.dx, shape), Floats(r.dx_terms, shape), "dx");
    }
  });
}

// y = f(BatchNormApply(x)). Magnitude: |y| plus the pre-activation's terms
// |x| / std * |gamma| + |beta| (f is 1-Lipschitz).
void CheckBatchNormActivationForward(OpRun& run) {
  ForEachLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const FusedInputs in = MakeFusedInputs(shape, channels);
    const Stats s = ReferenceStats(l, in.x);
    const std::vector<double> pre = Applied(l, Normalized(l, in.x, s), in.gamma, in.beta);
    std::vector<double> pre_terms(pre.size());
    for (int64_t i = 0; i < in.x.numel(); ++i) {
      const int64_t c = Channels{l}(i);
      pre_terms[static_cast<size_t>(i)] =
          std::fabs(in.x.data()[i] * s.invstd[static_cast<size_t>(c)] * in.gamma.data()[c]) +
          std::fabs(in.beta.data()[c]);
    }
    for (Activation f : kActivations) {
      SCOPED_TRACE(ActivationName(f));
      std::vector<double> y(pre.size());
      for (size_t i = 0; i < y.size(); ++i) y[i] = Activate(f, kSlope, pre[i]);
      const Tensor expected = Floats(y, shape), out = run.Poisoned(shape);
      run.backend().BatchNormActivationForward(l.n, l.c, l.hw, run.Put(in.x).data(), run.Put(s.mean32).data(),
                                               run.Put(s.var32).data(), kEps, run.Put(in.gamma).data(),
                                               run.Put(in.beta).data(), f, kSlope, out.data());
      run.Expect("y", OpRun::Get(out), expected, SumOfMagnitudes({expected, Floats(pre_terms, shape)}),
                 "y = f(batchnorm(x))");
    }
  });
}

// The backward of y = f(BatchNormApply(x)) given dL/dy, f' taken from y (the same fp32 y
// on both sides): BatchNormBackward of g = dy * f'(y), held to its bounds in g's terms.
void CheckBatchNormActivationBackward(OpRun& run) {
  ForEachLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const FusedInputs in = MakeFusedInputs(shape, channels);
    const Stats s = ReferenceStats(l, in.x);
    const std::vector<double> xhat = Normalized(l, in.x, s), pre = Applied(l, xhat, in.gamma, in.beta);
    for (Activation f : kActivations) {
      SCOPED_TRACE(ActivationName(f));
      std::vector<double> y(pre.size()), g(pre.size()), g_terms(pre.size());
      for (size_t i = 0; i < y.size(); ++i) y[i] = Activate(f, kSlope, pre[i]);
      const Tensor y32 = Floats(y, shape);
      for (size_t i = 0; i < y.size(); ++i) {
        const double dy = in.dy.data()[i], yi = y32.data()[i];
        g[i] = dy * SlopeAtOutput(f, kSlope, yi), g_terms[i] = std::fabs(dy) * SlopeTerms(f, yi);
      }
      const BackwardReference r = Backward(l, xhat, g, g_terms, s, in.gamma);
      const Tensor dx = run.Poisoned(shape), dgamma = run.Zeros(channels), dbeta = run.Zeros(channels);
      run.backend().BatchNormActivationBackward(
          l.n, l.c, l.hw, run.Put(in.x).data(), run.Put(y32).data(), run.Put(in.dy).data(), run.Put(s.mean32).data(),
          run.Put(s.var32).data(), kEps, run.Put(in.gamma).data(), f, kSlope, dx.data(), dgamma.data(), dbeta.data());
      run.Expect("dx", OpRun::Get(dx), Floats(r.dx, shape), Floats(r.dx_terms, shape), "dx");
      run.Expect("dgamma, dbeta", OpRun::Get(dgamma), Floats(r.dgamma, channels), Floats(r.dgamma_terms, channels),
                 "dgamma");
      run.Expect("dgamma, dbeta", OpRun::Get(dbeta), Floats(r.dbeta, channels), Floats(r.dbeta_terms, channels),
                 "dbeta");
    }
  });
}

}  // namespace gantry::testing
