// GCC 12 flags the self-initialised placeholder in _mm512_undefined_ps, which Eigen's
// AVX-512 transpose inlines into this file (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>
#include <vector>

#include "common/check.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/cpu/operand_rounding.h"

namespace gantry {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrix = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutableMatrix = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// C = alpha * A * B + beta * C for Eigen expressions A, B (plain maps or transposes).
template <typename A, typename B>
void AddProduct(const A& a, const B& b, float alpha, float beta, MutableMatrix& c) {
  if (beta == 0.0f) {
    // Assigning (rather than scaling by 0) drops whatever C held, NaN and Inf included.
    c.noalias() = alpha * a * b;
    return;
  }
  if (beta != 1.0f) c *= beta;
  c.noalias() += alpha * a * b;
}

}  // namespace

void EigenCpuBackend::Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                           float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                           float* c, int64_t ldc) {
  CHECK(m >= 0 && n >= 0 && k >= 0) << "m=" << m << " n=" << n << " k=" << k;
  if (m == 0 || n == 0) return;
  // Stored shapes: A is [m,k] or, transposed, [k,m]; likewise B is [k,n] or [n,k].
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  CHECK_GE(lda, a_cols);
  CHECK_GE(ldb, b_cols);
  CHECK_GE(ldc, n);

  MutableMatrix cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (k == 0) {
    if (beta == 0.0f) {
      cm.setZero();
    } else {
      cm *= beta;
    }
    return;
  }
  // Mixed precision: the product of rounded operands, exact per term, summed in fp32.
  // Per thread: ranks may run as threads sharing this backend.
  thread_local std::vector<float> a_rounded, b_rounded;
  a = RoundedMatrix(precision, a_rows, a_cols, a, lda, a_rounded, &lda);
  b = RoundedMatrix(precision, b_rows, b_cols, b, ldb, b_rounded, &ldb);
  const ConstMatrix am(a, a_rows, a_cols, Eigen::OuterStride<>(lda));
  const ConstMatrix bm(b, b_rows, b_cols, Eigen::OuterStride<>(ldb));
  if (!trans_a && !trans_b) {
    AddProduct(am, bm, alpha, beta, cm);
  } else if (!trans_a && trans_b) {
    AddProduct(am, bm.transpose(), alpha, beta, cm);
  } else if (trans_a && !trans_b) {
    AddProduct(am.transpose(), bm, alpha, beta, cm);
  } else {
    AddProduct(am.transpose(), bm.transpose(), alpha, beta, cm);
  }
}

}  // namespace gantry
