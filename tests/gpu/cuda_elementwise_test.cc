// The CUDA backend's non-product ops against the Eigen reference: per-channel bias, sums
// and affine maps, activations, element-wise arithmetic, dropout (masks bit for bit),
// losses, Adam and SGD, and the loss scaler's unscale + found-inf pass. Bounds:
// kElementwiseTolerance of the magnitudes of each output's terms (gpu_harness.h), except
// dropout and the found-inf decision, which must match exactly.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cuda/cuda_kernels.h"
#include "worker/tensor/cuda/cuda_memory.h"
#include "worker/tensor/cpu/gradient_unscale.h"

namespace gantry {
namespace {

using testing::Abs;
using testing::Cuda;
using testing::ExpectWithinBound;
using testing::kElementwiseTolerance;
using testing::RandomTensor;
using testing::SumAbs;
using testing::ToGpu;
using testing::ToHost;

// [n, c, hw] layouts: the DCGAN's (batch 64) and odd ones, hw == 1 included.
struct Layout {
  int64_t n, c, hw;
};
const Layout kLayouts[] = {{64, 256, 49}, {64, 128, 49}, {64, 64, 196}, {64, 12544, 1}, {3, 5, 7}, {1, 1, 1}};

constexpr Activation kActivations[] = {Activation::kLeakyRelu, Activation::kRelu, Activation::kTanh,
                                       Activation::kSigmoid};

void ExpectClose(const Tensor& gpu, const Tensor& cpu, const Tensor& magnitude, const std::string& what) {
  ExpectWithinBound(gpu, cpu, magnitude, kElementwiseTolerance, what);
}

TEST(CudaChannelOpsTest, BiasSumAffineAndBiasActivationMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(std::to_string(l.n) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw));
    const Shape shape{l.n, l.c, l.hw}, channels{l.c};
    const Tensor x = RandomTensor(shape, 1), bias = RandomTensor(channels, 2), scale = RandomTensor(channels, 3);
    Tensor y_cpu = x.Clone(), y_gpu = ToGpu(x), b_gpu = ToGpu(bias), s_gpu = ToGpu(scale);
    CpuBackend().AddChannelBias(l.n, l.c, l.hw, bias.data(), y_cpu.data());
    Cuda().AddChannelBias(l.n, l.c, l.hw, b_gpu.data(), y_gpu.data());
    ExpectWithinBound(ToHost(y_gpu), y_cpu, Abs(y_cpu), 0.0, "AddChannelBias (exact)");

    Tensor sum_cpu = bias.Clone(), sum_gpu = ToGpu(bias);
    CpuBackend().ChannelSum(l.n, l.c, l.hw, x.data(), sum_cpu.data());
    Cuda().ChannelSum(l.n, l.c, l.hw, ToGpu(x).data(), sum_gpu.data());
    Tensor sum_mag = Abs(bias);
    CpuBackend().ChannelSum(l.n, l.c, l.hw, Abs(x).data(), sum_mag.data());
    ExpectClose(ToHost(sum_gpu), sum_cpu, sum_mag, "ChannelSum");

    Tensor aff_cpu = Tensor::Zeros(shape), aff_gpu = Tensor::Zeros(shape, DType::kF32, Device::kCuda);
    CpuBackend().ChannelAffine(l.n, l.c, l.hw, x.data(), scale.data(), bias.data(), aff_cpu.data());
    Cuda().ChannelAffine(l.n, l.c, l.hw, ToGpu(x).data(), s_gpu.data(), b_gpu.data(), aff_gpu.data());
    Tensor aff_mag = Tensor::Zeros(shape);
    CpuBackend().ChannelAffine(l.n, l.c, l.hw, Abs(x).data(), Abs(scale).data(), Abs(bias).data(), aff_mag.data());
    ExpectClose(ToHost(aff_gpu), aff_cpu, aff_mag, "ChannelAffine");

    for (Activation f : kActivations) {
      Tensor fa_cpu = x.Clone(), fa_gpu = ToGpu(x);
      CpuBackend().AddChannelBiasActivation(l.n, l.c, l.hw, bias.data(), f, 0.3f, fa_cpu.data());
      Cuda().AddChannelBiasActivation(l.n, l.c, l.hw, b_gpu.data(), f, 0.3f, fa_gpu.data());
      ExpectClose(ToHost(fa_gpu), fa_cpu, SumAbs({fa_cpu, fa_cpu}), "AddChannelBiasActivation " +
                                                                        std::to_string(static_cast<int>(f)));
    }
  }
}

TEST(CudaActivationTest, ForwardAndBackwardMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (int64_t count : {int64_t{1}, int64_t{1000}, int64_t{64 * 12544}}) {
    const Tensor x = RandomTensor(Shape{count}, 5, 4.0f), dy = RandomTensor(Shape{count}, 6);
    for (Activation f : kActivations) {
      SCOPED_TRACE("count " + std::to_string(count) + " f " + std::to_string(static_cast<int>(f)));
      Tensor y_cpu = Tensor::Zeros(x.shape()), y_gpu = Tensor::Zeros(x.shape(), DType::kF32, Device::kCuda);
      CpuBackend().ActivationForward(f, 0.3f, count, x.data(), y_cpu.data());
      const Tensor x_gpu = ToGpu(x);
      Cuda().ActivationForward(f, 0.3f, count, x_gpu.data(), y_gpu.data());
      ExpectClose(ToHost(y_gpu), y_cpu, Abs(y_cpu), "forward");

      Tensor dx_cpu = Tensor::Zeros(x.shape()), dx_gpu = Tensor::Zeros(x.shape(), DType::kF32, Device::kCuda);
      CpuBackend().ActivationBackward(f, 0.3f, count, x.data(), y_cpu.data(), dy.data(), dx_cpu.data());
      const Tensor y_in = ToGpu(y_cpu);  // the same y on both sides: only backward is compared
      Cuda().ActivationBackward(f, 0.3f, count, x_gpu.data(), y_in.data(), ToGpu(dy).data(), dx_gpu.data());
      ExpectClose(ToHost(dx_gpu), dx_cpu, SumAbs({dy, dx_cpu}), "backward");
    }
  }
}

TEST(CudaElementwiseTest, MultiplyAxpyScaleCopyMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  const int64_t count = 100003;
  const Tensor a = RandomTensor(Shape{count}, 7), b = RandomTensor(Shape{count}, 8);
  Tensor out_gpu = Tensor::Zeros(a.shape(), DType::kF32, Device::kCuda), out_cpu = Tensor::Zeros(a.shape());
  const Tensor a_gpu = ToGpu(a), b_gpu = ToGpu(b);
  CpuBackend().Multiply(count, a.data(), b.data(), out_cpu.data());
  Cuda().Multiply(count, a_gpu.data(), b_gpu.data(), out_gpu.data());
  ExpectWithinBound(ToHost(out_gpu), out_cpu, Abs(out_cpu), 0.0, "Multiply (exact)");

  Tensor y_cpu = b.Clone(), y_gpu = ToGpu(b);
  CpuBackend().Axpy(count, -0.7f, a.data(), y_cpu.data());
  Cuda().Axpy(count, -0.7f, a_gpu.data(), y_gpu.data());
  ExpectClose(ToHost(y_gpu), y_cpu, SumAbs({a, b}), "Axpy");

  Cuda().Scale(count, 0.25f, y_gpu.data());
  CpuBackend().Scale(count, 0.25f, y_cpu.data());
  ExpectClose(ToHost(y_gpu), y_cpu, SumAbs({a, b}), "Scale");

  Tensor copy = Tensor::Zeros(a.shape(), DType::kF32, Device::kCuda);
  Cuda().Copy(count, a_gpu.data(), copy.data());
  ExpectWithinBound(ToHost(copy), a, Abs(a), 0.0, "Copy (exact)");
}

TEST(CudaDropoutTest, MasksAndOutputsEqualTheReferenceBitForBit) {
  GANTRY_CUDA_OR_SKIP();
  for (float rate : {0.0f, 0.3f, 0.5f}) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
      const int64_t count = 64 * 6272;
      const Tensor x = RandomTensor(Shape{count}, 9);
      Tensor mask_cpu = Tensor::Zeros(x.shape()), y_cpu = Tensor::Zeros(x.shape());
      CpuBackend().DropoutForward(count, rate, seed, x.data(), mask_cpu.data(), y_cpu.data());
      Tensor mask_gpu = Tensor::Zeros(x.shape(), DType::kF32, Device::kCuda), y_gpu = mask_gpu.Clone();
      Cuda().DropoutForward(count, rate, seed, ToGpu(x).data(), mask_gpu.data(), y_gpu.data());
      const Tensor mask = ToHost(mask_gpu), y = ToHost(y_gpu);
      ASSERT_EQ(std::memcmp(mask.data(), mask_cpu.data(), x.nbytes()), 0) << "rate " << rate << " seed " << seed;
      ASSERT_EQ(std::memcmp(y.data(), y_cpu.data(), x.nbytes()), 0) << "rate " << rate << " seed " << seed;
    }
  }
}

TEST(CudaLossTest, BceWithLogitsAndL1MatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (int64_t count : {int64_t{1}, int64_t{64}, int64_t{512}, int64_t{64 * 784}}) {
    SCOPED_TRACE("count " + std::to_string(count));
    Tensor logits = RandomTensor(Shape{count}, 10, 5.0f);
    logits.data()[0] = 90.0f;  // saturated logits stay finite
    if (count > 1) logits.data()[1] = -90.0f;
    const Tensor target = RandomTensor(Shape{count}, 11);
    for (float t : {0.0f, 1.0f, 0.9f}) {
      Tensor d_cpu = Tensor::Zeros(logits.shape()), d_gpu = Tensor::Zeros(logits.shape(), DType::kF32, Device::kCuda);
      const double loss_cpu = CpuBackend().BceWithLogits(count, logits.data(), t, d_cpu.data());
      const double loss_gpu = Cuda().BceWithLogits(count, ToGpu(logits).data(), t, d_gpu.data());
      EXPECT_NEAR(loss_gpu, loss_cpu, 1e-6 * (std::abs(loss_cpu) + 1.0)) << "BCE target " << t;
      // The gradient is (sigma(x) - t) / count: bound it by its terms, |sigma| + |t|, since
      // an ulp of expf moves sigma by ~6e-8 however close sigma is to t.
      Tensor terms = Tensor::Zeros(logits.shape());
      for (int64_t i = 0; i < count; ++i) {
        const double sigma = double{d_cpu.at(i)} * static_cast<double>(count) + t;
        terms.data()[i] = static_cast<float>((std::abs(sigma) + std::abs(t)) / static_cast<double>(count));
      }
      ExpectClose(ToHost(d_gpu), d_cpu, terms, "BCE gradient");
    }
    Tensor d_cpu = Tensor::Zeros(logits.shape()), d_gpu = Tensor::Zeros(logits.shape(), DType::kF32, Device::kCuda);
    const double l1_cpu = CpuBackend().L1Loss(count, logits.data(), target.data(), d_cpu.data());
    const double l1_gpu = Cuda().L1Loss(count, ToGpu(logits).data(), ToGpu(target).data(), d_gpu.data());
    EXPECT_NEAR(l1_gpu, l1_cpu, 1e-12 * (std::abs(l1_cpu) + 1.0)) << "L1 (double sums of exact terms)";
    ExpectWithinBound(ToHost(d_gpu), d_cpu, Abs(d_cpu), 0.0, "L1 gradient (exact)");
  }
}

TEST(CudaOptimizerTest, AdamAndSgdMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  const int64_t count = 1028545;  // the DCGAN generator's parameter count
  const Tensor grad = RandomTensor(Shape{count}, 12, 1e-2f), param = RandomTensor(Shape{count}, 13);
  const Tensor m0 = RandomTensor(Shape{count}, 14, 1e-3f), v0 = Abs(RandomTensor(Shape{count}, 15, 1e-4f));
  for (int64_t step : {int64_t{1}, int64_t{7}, int64_t{2000}}) {
    SCOPED_TRACE("step " + std::to_string(step));
    Tensor p_cpu = param.Clone(), m_cpu = m0.Clone(), v_cpu = v0.Clone();
    Tensor p_gpu = ToGpu(param), m_gpu = ToGpu(m0), v_gpu = ToGpu(v0);
    CpuBackend().AdamStep(count, 1e-4f, 0.5f, 0.999f, 1e-7f, step, grad.data(), p_cpu.data(), m_cpu.data(),
                          v_cpu.data());
    Cuda().AdamStep(count, 1e-4f, 0.5f, 0.999f, 1e-7f, step, ToGpu(grad).data(), p_gpu.data(), m_gpu.data(),
                    v_gpu.data());
    ExpectClose(ToHost(m_gpu), m_cpu, SumAbs({m0, grad}), "Adam m");
    ExpectClose(ToHost(v_gpu), v_cpu, SumAbs({v_cpu, v0}), "Adam v");  // both terms >= 0, so v bounds them
    // The new value is p minus an update: their magnitudes bound the round-off.
    Tensor update = p_cpu.Clone();
    CpuBackend().Axpy(count, -1.0f, param.data(), update.data());
    ExpectClose(ToHost(p_gpu), p_cpu, SumAbs({param, update}), "Adam param");
  }
  Tensor p_cpu = param.Clone(), buf_cpu = m0.Clone(), p_gpu = ToGpu(param), buf_gpu = ToGpu(m0);
  CpuBackend().SgdStep(count, 0.01f, 0.9f, grad.data(), p_cpu.data(), buf_cpu.data());
  Cuda().SgdStep(count, 0.01f, 0.9f, ToGpu(grad).data(), p_gpu.data(), buf_gpu.data());
  ExpectClose(ToHost(buf_gpu), buf_cpu, SumAbs({m0, grad}), "SGD momentum");
  ExpectClose(ToHost(p_gpu), p_cpu, SumAbs({param, m0, grad}), "SGD param");
}

// Equal floats, any NaN matching any NaN (NaN payloads differ between CPU and GPU).
void ExpectSameValues(const Tensor& gpu, const Tensor& cpu) {
  int64_t bad = 0;
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    const bool same = std::isnan(cpu.at(i)) ? std::isnan(gpu.at(i)) : gpu.at(i) == cpu.at(i);
    if (!same && bad++ == 0) ADD_FAILURE() << "element " << i << ": " << gpu.at(i) << " vs " << cpu.at(i);
  }
  EXPECT_EQ(bad, 0);
}

TEST(CudaUnscaleTest, UnscaleAndFoundInfMatchTheCpuPass) {
  GANTRY_CUDA_OR_SKIP();
  auto stream = static_cast<cudaStream_t>(cuda::ComputeStream());
  const int64_t count = 300001;
  for (int poison : {-1, 0, 150000, 300000}) {  // -1: all finite
    for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      SCOPED_TRACE("poison " + std::to_string(poison) + " value " + std::to_string(bad));
      Tensor g = RandomTensor(Shape{count}, 16, 1e4f);
      if (poison >= 0) g.data()[poison] = bad;
      Tensor g_cpu = g.Clone(), g_gpu = ToGpu(g);
      const bool ok_cpu = UnscaleAndCheckFinitePortable(g_cpu.data(), count, 1.0f / 65536.0f);
      const bool ok_gpu = cuda::UnscaleAndCheckFinite(g_gpu.data(), count, 1.0f / 65536.0f, stream);
      EXPECT_EQ(ok_gpu, ok_cpu);
      EXPECT_EQ(ok_gpu, poison < 0);
      ExpectSameValues(ToHost(g_gpu), g_cpu);
    }
  }
  // A finite value the multiplication overflows is caught too (scale below 1).
  Tensor big = Tensor::FromVector(Shape{3}, {1.0f, 3e38f, -2.0f});
  Tensor big_gpu = ToGpu(big);
  EXPECT_FALSE(cuda::UnscaleAndCheckFinite(big_gpu.data(), 3, 4.0f, stream));
  // bf16 wire: widened, unscaled and checked in one pass, as the CPU does.
  std::vector<uint16_t> wire(1000);
  for (size_t i = 0; i < wire.size(); ++i) wire[i] = bf16::FromFloat(static_cast<float>(i) - 500.0f).bits;
  wire[777] = 0x7f80;  // +Inf
  Tensor out_cpu = Tensor::Zeros(Shape{1000}), out_gpu = Tensor::Zeros(Shape{1000}, DType::kF32, Device::kCuda);
  Tensor wire_gpu = Tensor::Zeros(Shape{1000}, DType::kBF16, Device::kCuda);
  Tensor wire_host = Tensor::Zeros(Shape{1000}, DType::kBF16);
  std::memcpy(static_cast<void*>(wire_host.data_bf16()), wire.data(), wire.size() * 2);
  wire_gpu.CopyFrom(wire_host);
  const bool ok_cpu = UnscaleFromBf16AndCheckFinitePortable(wire.data(), out_cpu.data(), 1000, 0.5f);
  const bool ok_gpu = cuda::UnscaleFromBf16AndCheckFinite(reinterpret_cast<const uint16_t*>(wire_gpu.data_bf16()),
                                                          out_gpu.data(), 1000, 0.5f, stream);
  EXPECT_FALSE(ok_cpu);
  EXPECT_EQ(ok_gpu, ok_cpu);
  ExpectSameValues(ToHost(out_gpu), out_cpu);
}

}  // namespace
}  // namespace gantry
