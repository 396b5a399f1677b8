// The fast CPU backend: oneDNN primitives for the matrix products (GEMM as matmul,
// convolution forward / backward-data / backward-weights), the Eigen reference for
// everything else. Built only when CMake finds oneDNN (GANTRY_ONEDNN); pick it with
// FindBackend("onednn") (worker/tensor/backend_registry.h).
//
// Precisions: fp32 runs fp32 kernels. bf16 reorders the operands to bf16 (round to
// nearest even, as the reference) and runs bf16 kernels that accumulate and write fp32
// (AVX512-BF16 or AMX, whichever oneDNN finds). oneDNN 2.6 has no fp16 kernels for x86
// CPUs, so fp16 rounds the operands to fp16 values held in fp32 and runs the fp32
// kernels: the reference semantics exactly, at fp32 speed.
//
// Primitives are built once per shape and kept per thread, with user-managed scratch
// buffers reused across calls; oneDNN runs one thread per calling thread. Shapes oneDNN
// cannot take fall back to the Eigen reference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

// How the oneDNN backend runs one convolution op (chosen per problem and op by
// measurement; see onednn_conv_route.cc).
enum class ConvRoute {
  kNative,       // oneDNN kernels at the problem's precision (bf16 kernels for bf16)
  kRoundedFp32,  // operands rounded to the precision, then oneDNN's fp32 kernels
  kReference,    // the Eigen reference (im2col + GEMM)
  // Backward-weights only: a forward convolution with batch and channels swapped, at the
  // problem's precision (onednn_conv_plans.h says how).
  kBatchAsChannels,
  // im2col of a chunk of samples (the whole batch where the columns fit) and oneDNN's
  // fp32 matmul on operands rounded to the precision (worker/tensor/cpu/lowered_conv.h):
  // the weights stay in the caller's layout, with no reorder to a blocked one and back.
  kLowered,
  // Problems with one output channel (PatchGAN's logits): the direct kernels of
  // worker/tensor/cpu/one_output_conv.h on operands rounded to the precision.
  kOneOutput,
  // fp32 stride-1 4x4 problems (PatchGAN's wide stride-1 convolution): Winograd's
  // F(3x3, 4x4) (worker/tensor/cpu/winograd_conv.h), 36 oneDNN fp32 matmuls per chunk of
  // samples on transformed operands, 4x fewer multiply-adds than the direct kernels.
  kWinograd,
};
std::string_view ConvRouteName(ConvRoute route);

class OnednnBackend : public EigenCpuBackend {
 public:
  std::string_view name() const override { return "onednn"; }
  std::string ProductPath(MathPrecision precision) const override;

  using Backend::Gemm;
  void Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;

  void ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) override;
  void ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) override;
  void ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) override;
  // Where both passes run oneDNN's kernels on the caller's arrays, the operand they share
  // (dy; the transposed layer's g) is moved to the kernels' layout once.
  void ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                    float* dw) override;
  void ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w, float* dx,
                             float* dw) override;

  // The route `op` of `p` takes.
  static ConvRoute ChooseConvRoute(const ConvProblem& p, ConvOp op);
  // For benchmarks: sends every convolution down `route` (fp16 cannot go kNative and
  // takes kRoundedFp32), or back to ChooseConvRoute with nullopt. Process-wide.
  static void ForceConvRoute(std::optional<ConvRoute> route);

  // What runs `op` of `p` on this thread: the route and oneDNN's name for the kernel
  // ("eigen reference" where the reference runs it). For benchmarks and logs.
  static std::string ConvImplementation(const ConvProblem& p, ConvOp op);

 private:
  // Runs `op` of `p` along its route: inputs (a, b) and output in FindConvPlan's order.
  void RunConv(const ConvProblem& p, ConvOp op, const float* a, int64_t a_count, const float* b, int64_t b_count,
               float* out);
};

// The process-wide instance (its state is per thread).
OnednnBackend& OnednnCpuBackend();

// oneDNN's version, threading and the ISA its bf16 kernels run on, for logs and benchmarks.
std::string OnednnDescription();

}  // namespace gantry
