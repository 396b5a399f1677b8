// The per-channel ops on [n, c, hw] layouts: bias (exact: one fp32 addition), the
// channel sums and the affine map (kElementwiseTolerance of the terms' magnitudes, in
// place too), and bias + activation in one pass.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_ops/activation_reference.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/values.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {
namespace {

std::string Describe(const Layout& l) {
  return std::to_string(l.n) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw);
}

// Runs body(element index, channel) over every element of the layout.
template <typename Body>
void ForEachElement(const Layout& l, const Body& body) {
  for (int64_t i = 0; i < l.n * l.c * l.hw; ++i) body(i, (i / l.hw) % l.c);
}

// Runs body(layout, shape, channels) for every layout of the row.
template <typename Body>
void ForEachChannelLayout(OpRun& run, const Body& body) {
  for (const Layout& l : run.shapes<Layout>()) {
    SCOPED_TRACE(Describe(l));
    body(l, Shape{l.n, l.c, l.hw}, Shape{l.c});
  }
}

}  // namespace

void CheckAddChannelBias(OpRun& run) {
  ForEachChannelLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor y0 = RandomTensor(shape, 1), bias = RandomTensor(channels, 2);
    Tensor expected = y0.Clone();
    ForEachElement(l, [&](int64_t i, int64_t ch) { expected.data()[i] = y0.data()[i] + bias.data()[ch]; });
    const Tensor y = run.Put(y0);
    run.backend().AddChannelBias(l.n, l.c, l.hw, run.Put(bias).data(), y.data());
    run.Expect("y", OpRun::Get(y), expected, Tensor(), "y += bias");
  });
}

void CheckChannelSum(OpRun& run) {
  ForEachChannelLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor dy = RandomTensor(shape, 1), out0 = RandomTensor(channels, 2);
    std::vector<double> sum = Doubles(out0), magnitude = Magnitudes(out0);
    ForEachElement(l, [&](int64_t i, int64_t ch) {
      sum[static_cast<size_t>(ch)] += dy.data()[i];
      magnitude[static_cast<size_t>(ch)] += std::fabs(dy.data()[i]);
    });
    const Tensor out = run.Put(out0);
    run.backend().ChannelSum(l.n, l.c, l.hw, run.Put(dy).data(), out.data());
    run.Expect("out", OpRun::Get(out), Floats(sum, channels), Floats(magnitude, channels), "out += sums (accumulated)");
  });
}

void CheckChannelAffine(OpRun& run) {
  ForEachChannelLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor x = RandomTensor(shape, 1, 2.0f), scale = RandomTensor(channels, 2, 1.5f);
    const Tensor shift = RandomTensor(channels, 3);
    std::vector<double> y(static_cast<size_t>(x.numel())), magnitude(y.size());
    ForEachElement(l, [&](int64_t i, int64_t ch) {
      const double product = double{x.data()[i]} * scale.data()[ch];
      y[static_cast<size_t>(i)] = product + shift.data()[ch];
      magnitude[static_cast<size_t>(i)] = std::fabs(product) + std::fabs(shift.data()[ch]);
    });
    const Tensor expected = Floats(y, shape), bound = Floats(magnitude, shape);
    const Tensor scale_d = run.Put(scale), shift_d = run.Put(shift);
    const Tensor out = run.Poisoned(shape), in_place = run.Put(x);
    run.backend().ChannelAffine(l.n, l.c, l.hw, run.Put(x).data(), scale_d.data(), shift_d.data(), out.data());
    run.backend().ChannelAffine(l.n, l.c, l.hw, in_place.data(), scale_d.data(), shift_d.data(), in_place.data());
    run.Expect("y", OpRun::Get(out), expected, bound, "y = x * scale + shift");
    run.Expect("y", OpRun::Get(in_place), expected, bound, "in place");
  });
}

// y = f(y + bias) in place. The magnitude: |f(s)| plus the sum's terms |y| + |bias|
// times |f'(s)| (how far the sum's fp32 rounding moves the result).
void CheckAddChannelBiasActivation(OpRun& run) {
  ForEachChannelLayout(run, [&](const Layout& l, const Shape& shape, const Shape& channels) {
    const Tensor y0 = RandomTensor(shape, 5), bias = RandomTensor(channels, 6);
    for (Activation f : kActivations) {
      SCOPED_TRACE(ActivationName(f));
      std::vector<double> y(static_cast<size_t>(y0.numel())), magnitude(y.size());
      ForEachElement(l, [&](int64_t i, int64_t ch) {
        const double s = double{y0.data()[i]} + bias.data()[ch], out = Activate(f, kSlope, s);
        const double slope = std::fabs(SlopeAtOutput(f, kSlope, out));
        y[static_cast<size_t>(i)] = out;
        magnitude[static_cast<size_t>(i)] =
            std::fabs(out) + slope * (std::fabs(y0.data()[i]) + std::fabs(bias.data()[ch]));
      });
      const Tensor out = run.Put(y0);
      run.backend().AddChannelBiasActivation(l.n, l.c, l.hw, run.Put(bias).data(), f, kSlope, out.data());
      run.Expect("y", OpRun::Get(out), Floats(y, shape), Floats(magnitude, shape), "y = f(y + bias)");
    }
  });
}

}  // namespace gantry::testing
