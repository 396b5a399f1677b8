// The reference convolutions: operands rounded to the problem's precision, then
// lowered to Eigen GEMMs a chunk of samples at a time (lowered_conv.h).
#include <algorithm>
#include <vector>

#include "common/check.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/cpu/lowered_conv.h"
#include "worker/tensor/cpu/operand_rounding.h"

namespace gantry {
namespace {

// Samples per chunk are chosen to make the chunk's GEMM at most about this many columns
// wide. One 7x7 sample gives N = 49, too narrow for Eigen's kernels, so 7 of them go
// together; a 14x14 sample (N = 196) runs alone. Wider chunks let the column and
// channel-major buffers fall out of L2, and the scatter/copy passes around the GEMM then
// slow down more than the GEMM speeds up (measured on the DCGAN layers, batch 64:
// chunks of 4-16 7x7 samples beat both 1 and 64; 14x14 samples gain nothing).
constexpr int64_t kTargetGemmColumns = 384;

// Per-thread rounded copies of the operands (ranks may run as threads sharing one
// backend).
struct Scratch {
  std::vector<float> round_a, round_b;
};
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

// The reference GEMM, also inside a derived backend (a qualified, non-virtual call), on
// operands that are already rounded.
void EigenCpuBackend::EigenGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                int64_t ldc) {
  EigenCpuBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void EigenCpuBackend::set_max_column_floats(int64_t floats) {
  CHECK_GT(floats, 0);
  max_column_floats_ = floats;
}

int64_t EigenCpuBackend::ChunkSamples(const ConvProblem& p) const {
  const int64_t wanted = kTargetGemmColumns / (p.out_height * p.out_width);
  const int64_t fit = max_column_floats_ / ColumnFloatsPerSample(p);
  return std::clamp<int64_t>(std::min(wanted, fit), 1, p.batch);
}

LoweringGemm EigenCpuBackend::ReferenceGemm() {
  return [this](bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    EigenGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
}

void EigenCpuBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  x = RoundedOperand(p.precision, p.batch * p.in_image_size(), x, s.round_a);
  w = RoundedOperand(p.precision, p.weight_size(), w, s.round_b);
  LoweredConvForward(p, ChunkSamples(p), x, w, y, ReferenceGemm());
}

void EigenCpuBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  dy = RoundedOperand(p.precision, p.batch * p.out_image_size(), dy, s.round_a);
  w = RoundedOperand(p.precision, p.weight_size(), w, s.round_b);
  LoweredConvBackwardData(p, ChunkSamples(p), dy, w, dx, ReferenceGemm());
}

void EigenCpuBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  Scratch& s = ThreadScratch();
  x = RoundedOperand(p.precision, p.batch * p.in_image_size(), x, s.round_a);
  dy = RoundedOperand(p.precision, p.batch * p.out_image_size(), dy, s.round_b);
  LoweredConvBackwardWeights(p, ChunkSamples(p), x, dy, dw, ReferenceGemm());
}

}  // namespace gantry
