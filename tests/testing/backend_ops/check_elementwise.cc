// The element-wise ops and dropout on flat buffers of every row's counts (lengths off
// any vector width among them). Single fp32 operations (a product, a copy, LeakyReLU and
// ReLU, dropout's mask and product) must be exact; the rest within kElementwiseTolerance
// of the terms' magnitudes. The aliasing the interface allows is exercised too.
#include <algorithm>
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_ops/activation_reference.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/values.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/random.h"

namespace gantry::testing {
namespace {

// Runs body(count, shape) for every count of the row.
template <typename Body>
void ForEachCount(OpRun& run, const Body& body) {
  for (int64_t count : run.shapes<int64_t>()) {
    SCOPED_TRACE("count " + std::to_string(count));
    body(count, Shape{count});
  }
}

// Activation inputs: uniform in [-4, 4] after the saturated and kink values -100, 100, 0.
Tensor ActivationInputs(const Shape& shape) {
  Tensor x = RandomTensor(shape, 5, 4.0f);
  const float special[] = {-100.0f, 100.0f, 0.0f};
  for (int64_t i = 0; i < std::min<int64_t>(x.numel(), 3); ++i) x.data()[i] = special[i];
  return x;
}

// y = f(x) in double, rounded to fp32 (the y both sides of a backward check use).
Tensor Activated(Activation f, const Tensor& x) {
  std::vector<double> y = Doubles(x);
  for (double& v : y) v = Activate(f, kSlope, v);
  return Floats(y, x.shape());
}

std::string ActivationOutput(Activation f, const char* name) {
  return std::string(name) + (PiecewiseLinear(f) ? " (leaky-relu, relu)" : " (tanh, sigmoid)");
}

// Each draw of dropout's mask, as the interface defines it.
Tensor DropoutMask(int64_t count, float rate, uint64_t seed) {
  Tensor mask = Tensor::Zeros(Shape{count});
  const float keep_scale = 1.0f / (1.0f - rate);
  for (int64_t i = 0; i < count; ++i) {
    mask.data()[i] = HashUniform(seed, static_cast<uint64_t>(i)) < rate ? 0.0f : keep_scale;
  }
  return mask;
}

}  // namespace

void CheckActivationForward(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor x = ActivationInputs(shape);
    for (Activation f : kActivations) {
      SCOPED_TRACE(ActivationName(f));
      const Tensor y = run.Poisoned(shape), expected = Activated(f, x);
      run.backend().ActivationForward(f, kSlope, count, run.Put(x).data(), y.data());
      run.Expect(ActivationOutput(f, "y"), OpRun::Get(y), expected, SumOfMagnitudes({expected}), "y = f(x)");
    }
  });
}

// dx = dy * f'(.) from x (LeakyReLU, ReLU) or y (Tanh, Sigmoid), the other one null; and
// again with dx aliasing dy. Magnitude |dy| + |dx|.
void CheckActivationBackward(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor x = ActivationInputs(shape), dy = RandomTensor(shape, 6);
    for (Activation f : kActivations) {
      SCOPED_TRACE(ActivationName(f));
      const Tensor y = Activated(f, x);
      std::vector<double> dx = Doubles(dy);
      for (int64_t i = 0; i < count; ++i) {
        const double derivative = PiecewiseLinear(f)
                                      ? (x.data()[i] > 0.0f ? 1.0 : (f == Activation::kRelu ? 0.0 : kSlope))
                                      : SlopeAtOutput(f, kSlope, y.data()[i]);
        dx[static_cast<size_t>(i)] *= derivative;
      }
      const Tensor expected = Floats(dx, shape), magnitude = SumOfMagnitudes({dy, expected});
      const Tensor x_d = PiecewiseLinear(f) ? run.Put(x) : Tensor(), y_d = PiecewiseLinear(f) ? Tensor() : run.Put(y);
      const float* xs = x_d.defined() ? x_d.data() : nullptr;
      const float* ys = y_d.defined() ? y_d.data() : nullptr;
      const Tensor out = run.Poisoned(shape), in_place = run.Put(dy);
      run.backend().ActivationBackward(f, kSlope, count, xs, ys, run.Put(dy).data(), out.data());
      run.backend().ActivationBackward(f, kSlope, count, xs, ys, in_place.data(), in_place.data());
      run.Expect(ActivationOutput(f, "dx"), OpRun::Get(out), expected, magnitude, "dx = dy * f'");
      run.Expect(ActivationOutput(f, "dx"), OpRun::Get(in_place), expected, magnitude, "dx aliasing dy");
    }
  });
}

void CheckMultiply(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor a = RandomTensor(shape, 7), b = RandomTensor(shape, 8);
    Tensor expected = Tensor::Zeros(shape);
    for (int64_t i = 0; i < count; ++i) expected.data()[i] = a.data()[i] * b.data()[i];
    const Tensor b_d = run.Put(b), out = run.Poisoned(shape), in_place = run.Put(a);
    run.backend().Multiply(count, run.Put(a).data(), b_d.data(), out.data());
    run.backend().Multiply(count, in_place.data(), b_d.data(), in_place.data());
    run.Expect("out", OpRun::Get(out), expected, Tensor(), "out = a * b");
    run.Expect("out", OpRun::Get(in_place), expected, Tensor(), "out aliasing a");
  });
}

void CheckAxpy(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor x = RandomTensor(shape, 7), y0 = RandomTensor(shape, 8);
    const float alpha = -0.7f;
    std::vector<double> y = Doubles(y0), magnitude = Magnitudes(y0);
    for (int64_t i = 0; i < count; ++i) {
      y[static_cast<size_t>(i)] += double{alpha} * x.data()[i];
      magnitude[static_cast<size_t>(i)] += std::fabs(double{alpha} * x.data()[i]);
    }
    const Tensor out = run.Put(y0);
    run.backend().Axpy(count, alpha, run.Put(x).data(), out.data());
    run.Expect("y", OpRun::Get(out), Floats(y, shape), Floats(magnitude, shape), "y += alpha * x");
  });
}

void CheckScale(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor x0 = RandomTensor(shape, 7);
    Tensor expected = x0.Clone();
    for (int64_t i = 0; i < count; ++i) expected.data()[i] = x0.data()[i] * -0.7f;
    const Tensor x = run.Put(x0);
    run.backend().Scale(count, -0.7f, x.data());
    run.Expect("x", OpRun::Get(x), expected, SumOfMagnitudes({expected}), "x *= alpha");
  });
}

void CheckCopy(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor src = RandomTensor(shape, 7), dst = run.Poisoned(shape);
    run.backend().Copy(count, run.Put(src).data(), dst.data());
    run.Expect("dst", OpRun::Get(dst), src, Tensor(), "dst = src");
  });
}

// Masks and outputs exactly as defined (a pure function of seed and index), at rates 0,
// 0.3 and 0.5; over 100000 elements the dropped fraction is within 0.01 of the rate, and
// masks of different seeds differ in about half the elements at rate 0.5.
void CheckDropoutForward(OpRun& run) {
  ForEachCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor x = RandomTensor(shape, 9);
    for (float rate : {0.0f, 0.3f, 0.5f}) {
      std::vector<Tensor> masks;
      for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
        SCOPED_TRACE("rate " + std::to_string(rate) + " seed " + std::to_string(seed));
        const Tensor expected_mask = DropoutMask(count, rate, seed);
        Tensor expected_y = Tensor::Zeros(shape);
        for (int64_t i = 0; i < count; ++i) expected_y.data()[i] = x.data()[i] * expected_mask.data()[i];
        const Tensor mask = run.Poisoned(shape), y = run.Poisoned(shape);
        run.backend().DropoutForward(count, rate, seed, run.Put(x).data(), mask.data(), y.data());
        masks.push_back(OpRun::Get(mask));
        run.Expect("mask, y", masks.back(), expected_mask, Tensor(), "mask");
        run.Expect("mask, y", OpRun::Get(y), expected_y, Tensor(), "y = x * mask");
        int64_t dropped = 0;
        for (int64_t i = 0; i < count; ++i) dropped += masks.back().data()[i] == 0.0f;
        if (count >= 100000) {
          EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(count), rate, 0.01) << "dropped fraction";
        }
      }
      int64_t differing = 0;
      for (int64_t i = 0; i < count; ++i) differing += masks[0].at(i) != masks[1].at(i);
      if (rate == 0.5f && count >= 1000) {
        EXPECT_GT(differing, count / 4) << "seeds 0 and 42 give the same mask";
      }
    }
  });
}

}  // namespace gantry::testing
