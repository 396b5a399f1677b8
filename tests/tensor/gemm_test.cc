#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Random(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  return v;
}

// The definition, in double: C = alpha op(A) op(B) + beta C (beta == 0 drops C).
void NaiveGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float av = ta ? a[p * lda + i] : a[i * lda + p];
        const float bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        sum += static_cast<double>(av) * bv;
      }
      const double old = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c[i * ldc + j];
      c[i * ldc + j] = static_cast<float>(alpha * sum + old);
    }
  }
}

struct GemmCase {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra elements per row beyond the matrix, for every operand
};

void RunCase(const GemmCase& t) {
  SCOPED_TRACE(::testing::Message() << "ta=" << t.trans_a << " tb=" << t.trans_b << " m=" << t.m
                                    << " n=" << t.n << " k=" << t.k << " alpha=" << t.alpha
                                    << " beta=" << t.beta << " pad=" << t.pad);
  const int64_t a_rows = t.trans_a ? t.k : t.m, a_cols = t.trans_a ? t.m : t.k;
  const int64_t b_rows = t.trans_b ? t.n : t.k, b_cols = t.trans_b ? t.k : t.n;
  const int64_t lda = a_cols + t.pad, ldb = b_cols + t.pad, ldc = t.n + t.pad;
  const std::vector<float> a = Random(a_rows * lda, 1), b = Random(b_rows * ldb, 2);
  std::vector<float> c = Random(t.m * ldc, 3);
  std::vector<float> expected = c;
  NaiveGemm(t.trans_a, t.trans_b, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb, t.beta,
            expected.data(), ldc);
  CpuBackend().Gemm(t.trans_a, t.trans_b, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb, t.beta,
                    c.data(), ldc);
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j < t.n) {
        ASSERT_NEAR(c[at], expected[at], 1e-5 * (1 + t.k)) << "C[" << i << "," << j << "]";
      } else {
        ASSERT_EQ(c[at], expected[at]) << "padding C[" << i << "," << j << "] was written";
      }
    }
  }
}

TEST(GemmTest, AllTransposeCombinationsMatchNaive) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      RunCase({ta, tb, 5, 7, 3, 1.0f, 0.0f, 0});
      RunCase({ta, tb, 13, 4, 17, 1.0f, 0.0f, 0});
      RunCase({ta, tb, 1, 1, 9, 1.0f, 0.0f, 0});
    }
  }
}

TEST(GemmTest, AlphaAndBeta) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      RunCase({ta, tb, 6, 5, 4, 0.5f, 1.0f, 0});
      RunCase({ta, tb, 6, 5, 4, -2.0f, 0.25f, 0});
      RunCase({ta, tb, 6, 5, 4, 1.0f, -1.0f, 0});
    }
  }
}

TEST(GemmTest, LeadingDimensionsLargerThanMatrix) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      RunCase({ta, tb, 4, 6, 5, 1.0f, 0.0f, 3});
      RunCase({ta, tb, 9, 3, 7, 1.5f, 0.5f, 5});
    }
  }
}

TEST(GemmTest, LargerThanEigenBlocking) {
  RunCase({false, false, 70, 90, 300, 1.0f, 1.0f, 2});
  RunCase({true, true, 65, 33, 129, 0.5f, 0.0f, 1});
}

TEST(GemmTest, BetaZeroIgnoresNanInC) {
  const float poison[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (int64_t size : {2, 37}) {
        const std::vector<float> a = Random(size * size, 4), b = Random(size * size, 5);
        std::vector<float> c(static_cast<size_t>(size * size));
        for (size_t i = 0; i < c.size(); ++i) c[i] = poison[i % 2];
        std::vector<float> expected(c.size(), 0.0f);
        NaiveGemm(ta, tb, size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f, expected.data(),
                  size);
        CpuBackend().Gemm(ta, tb, size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f, c.data(),
                          size);
        for (size_t i = 0; i < c.size(); ++i) {
          ASSERT_NEAR(c[i], expected[i], 1e-4)
              << "ta=" << ta << " tb=" << tb << " size=" << size << " at " << i;
        }
      }
    }
  }
}

TEST(GemmTest, EmptyInnerDimensionScalesC) {
  std::vector<float> c = {1, 2, 3, std::numeric_limits<float>::quiet_NaN()};
  CpuBackend().Gemm(false, false, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 2, 0.5f, c.data(), 2);
  EXPECT_FLOAT_EQ(c[0], 0.5f);
  EXPECT_FLOAT_EQ(c[2], 1.5f);
  CpuBackend().Gemm(false, false, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 2, 0.0f, c.data(), 2);
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace gantry
