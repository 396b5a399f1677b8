// The losses (means over their inputs, saturated logits included) and the optimizer
// steps on flat buffers, against the formulas of worker/tensor/backend.h in double. The
// magnitudes are those the CUDA tests derived; L1's gradient is exact.
#include <algorithm>
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/values.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {
namespace {

template <typename Body>
void ForEachLossCount(OpRun& run, const Body& body) {
  for (int64_t count : run.shapes<int64_t>()) {
    SCOPED_TRACE("count " + std::to_string(count));
    body(count, Shape{count});
  }
}

// A loss value as a one-element tensor (losses are held to |loss| + 1, the CUDA test's magnitude).
Tensor Scalar(double v) { return Floats({v}, Shape{1}); }

// Logits uniform in [-5, 5] after 0 and the saturated +-90, +-100.
Tensor Logits(const Shape& shape) {
  Tensor x = RandomTensor(shape, 10, 5.0f);
  const float special[] = {0.0f, 90.0f, -90.0f, 100.0f, -100.0f};
  for (int64_t i = 0; i < std::min<int64_t>(x.numel(), 5); ++i) x.data()[i] = special[i];
  return x;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct OptimizerBuffers {
  Tensor grad, param, m, v;
};

// The CUDA test's buffers: gradients ~1e-2, parameters ~1, moments ~1e-3 and ~1e-4.
OptimizerBuffers MakeOptimizerBuffers(const Shape& shape) {
  return {RandomTensor(shape, 12, 1e-2f), RandomTensor(shape, 13), RandomTensor(shape, 14, 1e-3f),
          Abs(RandomTensor(shape, 15, 1e-4f))};
}

}  // namespace

// Loss (with and without the gradient) and d(mean loss)/dlogits, at targets 0, 1, 0.9.
void CheckBceWithLogits(OpRun& run) {
  ForEachLossCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor logits = Logits(shape), logits_d = run.Put(logits);
    const auto n = static_cast<double>(count);
    for (float target : {0.0f, 1.0f, 0.9f}) {
      SCOPED_TRACE("target " + std::to_string(target));
      const double t = target;
      double loss = 0.0;
      std::vector<double> grad(static_cast<size_t>(count)), magnitude(grad.size());
      for (int64_t i = 0; i < count; ++i) {
        const double x = logits.data()[i];
        loss += (std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::fabs(x)))) / n;
        grad[static_cast<size_t>(i)] = (Sigmoid(x) - t) / n;
        magnitude[static_cast<size_t>(i)] = (Sigmoid(x) + std::fabs(t)) / n;
      }
      const Tensor dlogits = run.Poisoned(shape);
      const double with_gradient = run.backend().BceWithLogits(count, logits_d.data(), target, dlogits.data());
      const double without = run.backend().BceWithLogits(count, logits_d.data(), target, nullptr);
      run.Expect("loss", Scalar(with_gradient), Scalar(loss), Scalar(std::fabs(loss) + 1.0), "loss");
      run.Expect("loss", Scalar(without), Scalar(loss), Scalar(std::fabs(loss) + 1.0), "loss without gradient");
      run.Expect("dlogits", OpRun::Get(dlogits), Floats(grad, shape), Floats(magnitude, shape), "dlogits");
    }
  });
}

// Mean |pred - target| (double sums of exact terms) and sign(pred - target) / count, 0
// where they are equal (the first element).
void CheckL1Loss(OpRun& run) {
  ForEachLossCount(run, [&](int64_t count, const Shape& shape) {
    const Tensor pred = RandomTensor(shape, 10, 5.0f);
    Tensor target = RandomTensor(shape, 11);
    target.data()[0] = pred.data()[0];
    double loss = 0.0;
    Tensor grad = Tensor::Zeros(shape);
    const float inv_count = 1.0f / static_cast<float>(count);
    for (int64_t i = 0; i < count; ++i) {
      loss += std::fabs(double{pred.data()[i]} - target.data()[i]) / static_cast<double>(count);
      const float d = pred.data()[i] - target.data()[i];
      grad.data()[i] = d > 0.0f ? inv_count : (d < 0.0f ? -inv_count : 0.0f);
    }
    const Tensor pred_d = run.Put(pred), target_d = run.Put(target), dpred = run.Poisoned(shape);
    const double with_gradient = run.backend().L1Loss(count, pred_d.data(), target_d.data(), dpred.data());
    const double without = run.backend().L1Loss(count, pred_d.data(), target_d.data(), nullptr);
    run.Expect("loss", Scalar(with_gradient), Scalar(loss), Scalar(std::fabs(loss) + 1.0), "loss");
    run.Expect("loss", Scalar(without), Scalar(loss), Scalar(std::fabs(loss) + 1.0), "loss without gradient");
    run.Expect("dpred", OpRun::Get(dpred), grad, Tensor(), "dpred");
  });
}

// Adam at steps 1, 7 and 2000 (bias corrections near 0 and near 1); the DCGAN's settings.
void CheckAdamStep(OpRun& run) {
  const float lr = 1e-4f, beta1 = 0.5f, beta2 = 0.999f, eps = 1e-7f;
  ForEachLossCount(run, [&](int64_t count, const Shape& shape) {
    const OptimizerBuffers b = MakeOptimizerBuffers(shape);
    for (int64_t step : {int64_t{1}, int64_t{7}, int64_t{2000}}) {
      SCOPED_TRACE("step " + std::to_string(step));
      const double c1 = 1.0 - std::pow(double{beta1}, step), c2 = 1.0 - std::pow(double{beta2}, step);
      std::vector<double> m(static_cast<size_t>(count)), v(m.size()), p(m.size()), update(m.size());
      for (int64_t i = 0; i < count; ++i) {
        const auto j = static_cast<size_t>(i);
        const double g = b.grad.data()[i];
        m[j] = beta1 * double{b.m.data()[i]} + (1.0 - double{beta1}) * g;
        v[j] = beta2 * double{b.v.data()[i]} + (1.0 - double{beta2}) * g * g;
        update[j] = -double{lr} * (m[j] / c1) / (std::sqrt(v[j] / c2) + double{eps});
        p[j] = b.param.data()[i] + update[j];
      }
      const Tensor param = run.Put(b.param), m_d = run.Put(b.m), v_d = run.Put(b.v);
      run.backend().AdamStep(count, lr, beta1, beta2, eps, step, run.Put(b.grad).data(), param.data(), m_d.data(),
                             v_d.data());
      const Tensor v_ref = Floats(v, shape);
      run.Expect("m, v, param", OpRun::Get(m_d), Floats(m, shape), SumOfMagnitudes({b.m, b.grad}), "m");
      run.Expect("m, v, param", OpRun::Get(v_d), v_ref, SumOfMagnitudes({v_ref, b.v}), "v");
      run.Expect("m, v, param", OpRun::Get(param), Floats(p, shape), SumOfMagnitudes({b.param, Floats(update, shape)}),
                 "param");
    }
  });
}

// SGD with momentum 0.9: buf = 0.9 buf + g; p -= lr buf.
void CheckSgdStep(OpRun& run) {
  ForEachLossCount(run, [&](int64_t count, const Shape& shape) {
    const OptimizerBuffers b = MakeOptimizerBuffers(shape);
    std::vector<double> buf(static_cast<size_t>(count)), p(buf.size());
    for (int64_t i = 0; i < count; ++i) {
      const auto j = static_cast<size_t>(i);
      buf[j] = double{0.9f} * b.m.data()[i] + b.grad.data()[i];
      p[j] = b.param.data()[i] - double{0.01f} * buf[j];
    }
    const Tensor param = run.Put(b.param), buf_d = run.Put(b.m);
    run.backend().SgdStep(count, 0.01f, 0.9f, run.Put(b.grad).data(), param.data(), buf_d.data());
    run.Expect("buf, param", OpRun::Get(buf_d), Floats(buf, shape), SumOfMagnitudes({b.m, b.grad}), "momentum");
    run.Expect("buf, param", OpRun::Get(param), Floats(p, shape), SumOfMagnitudes({b.param, b.m, b.grad}), "param");
  });
}

}  // namespace gantry::testing
