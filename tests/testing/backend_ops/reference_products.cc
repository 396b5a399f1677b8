#include "tests/testing/backend_ops/reference_products.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace gantry::testing {
namespace {

// Runs body(0) .. body(count - 1) on every hardware thread: the references of the
// training-size rows are billions of multiply-adds. Each index writes its own outputs.
template <typename Body>
void ParallelFor(int64_t count, const Body& body) {
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t i = next++; i < count; i = next++) body(i);
  };
  const int64_t threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, count);
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

// The output positions o whose tap o * stride - padding + tap lies inside [0, size).
struct TapRange {
  int64_t begin, end;
};
TapRange Inside(int64_t out_size, int64_t size, int64_t stride, int64_t padding, int64_t tap) {
  const int64_t shift = padding - tap;  // o * stride >= shift and o * stride < size + shift
  const int64_t begin = shift <= 0 ? 0 : (shift + stride - 1) / stride;
  const int64_t end = size + shift <= 0 ? 0 : (size + shift - 1) / stride + 1;
  return {begin, std::min(end, out_size)};
}

// taps[oy, ox] = image[oy * stride - padding + ky, ox * stride - padding + kx], 0 outside
// the image: what kernel tap (ky, kx) multiplies at each output pixel (the definition in
// conv_problem.h, one tap at a time).
void Taps(const ConvProblem& p, const double* image, int64_t ky, int64_t kx, double* taps) {
  const TapRange rows = Inside(p.out_height, p.in_height, p.stride, p.padding, ky);
  const TapRange cols = Inside(p.out_width, p.in_width, p.stride, p.padding, kx);
  std::fill(taps, taps + p.out_height * p.out_width, 0.0);
  for (int64_t oy = rows.begin; oy < rows.end; ++oy) {
    const int64_t row = (oy * p.stride - p.padding + ky) * p.in_width - p.padding + kx;
    for (int64_t ox = cols.begin; ox < cols.end; ++ox) taps[oy * p.out_width + ox] = image[row + ox * p.stride];
  }
}

// The adjoint of Taps: image[the pixel tap (ky, kx) reads at (oy, ox)] += values[oy, ox].
void AddToTaps(const ConvProblem& p, const double* values, int64_t ky, int64_t kx, double* image) {
  const TapRange rows = Inside(p.out_height, p.in_height, p.stride, p.padding, ky);
  const TapRange cols = Inside(p.out_width, p.in_width, p.stride, p.padding, kx);
  for (int64_t oy = rows.begin; oy < rows.end; ++oy) {
    const int64_t row = (oy * p.stride - p.padding + ky) * p.in_width - p.padding + kx;
    for (int64_t ox = cols.begin; ox < cols.end; ++ox) image[row + ox * p.stride] += values[oy * p.out_width + ox];
  }
}

// op(X)[r, col] of a stored matrix, densely into rows x cols.
std::vector<double> Dense(const std::vector<double>& x, bool trans, int64_t rows, int64_t cols, int64_t ld) {
  std::vector<double> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      out[static_cast<size_t>(r * cols + col)] = x[static_cast<size_t>(trans ? col * ld + r : r * ld + col)];
    }
  }
  return out;
}

}  // namespace

void ReferenceGemm(const GemmShape& s, double alpha, const std::vector<double>& a, const std::vector<double>& b,
                   double beta, std::vector<double>& c) {
  const int64_t lda = (s.trans_a ? s.m : s.k) + s.pad, ldb = (s.trans_b ? s.k : s.n) + s.pad, ldc = s.n + s.pad;
  const std::vector<double> da = Dense(a, s.trans_a, s.m, s.k, lda), db = Dense(b, s.trans_b, s.k, s.n, ldb);
  std::vector<double> row(static_cast<size_t>(s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < s.k; ++p) {
      const double av = da[static_cast<size_t>(i * s.k + p)];
      const double* brow = &db[static_cast<size_t>(p * s.n)];
      for (int64_t j = 0; j < s.n; ++j) row[static_cast<size_t>(j)] += av * brow[j];
    }
    for (int64_t j = 0; j < s.n; ++j) {
      double& out = c[static_cast<size_t>(i * ldc + j)];
      out = alpha * row[static_cast<size_t>(j)] + (beta == 0.0 ? 0.0 : beta * out);
    }
  }
}

std::vector<double> ReferenceConvForward(const ConvProblem& p, const std::vector<double>& x,
                                         const std::vector<double>& w) {
  const int64_t k = p.kernel, pixels = p.out_height * p.out_width;
  std::vector<double> y(static_cast<size_t>(p.batch * p.out_image_size()), 0.0);
  ParallelFor(p.batch, [&](int64_t n) {
    std::vector<double> taps(static_cast<size_t>(pixels));
    for (int64_t c = 0; c < p.in_channels; ++c) {
      for (int64_t ky = 0; ky < k; ++ky) {
        for (int64_t kx = 0; kx < k; ++kx) {
          Taps(p, &x[static_cast<size_t>((n * p.in_channels + c) * p.in_height * p.in_width)], ky, kx, taps.data());
          for (int64_t o = 0; o < p.out_channels; ++o) {
            const double wv = w[static_cast<size_t>(((o * p.in_channels + c) * k + ky) * k + kx)];
            double* yp = &y[static_cast<size_t>((n * p.out_channels + o) * pixels)];
            for (int64_t i = 0; i < pixels; ++i) yp[i] += wv * taps[static_cast<size_t>(i)];
          }
        }
      }
    }
  });
  return y;
}

std::vector<double> ReferenceConvBackwardData(const ConvProblem& p, const std::vector<double>& dy,
                                              const std::vector<double>& w) {
  const int64_t k = p.kernel, pixels = p.out_height * p.out_width;
  std::vector<double> dx(static_cast<size_t>(p.batch * p.in_image_size()), 0.0);
  ParallelFor(p.batch, [&](int64_t n) {
    std::vector<double> sums(static_cast<size_t>(pixels));
    for (int64_t c = 0; c < p.in_channels; ++c) {
      for (int64_t ky = 0; ky < k; ++ky) {
        for (int64_t kx = 0; kx < k; ++kx) {
          std::fill(sums.begin(), sums.end(), 0.0);
          for (int64_t o = 0; o < p.out_channels; ++o) {
            const double wv = w[static_cast<size_t>(((o * p.in_channels + c) * k + ky) * k + kx)];
            const double* dyp = &dy[static_cast<size_t>((n * p.out_channels + o) * pixels)];
            for (int64_t i = 0; i < pixels; ++i) sums[static_cast<size_t>(i)] += wv * dyp[i];
          }
          AddToTaps(p, sums.data(), ky, kx,
                    &dx[static_cast<size_t>((n * p.in_channels + c) * p.in_height * p.in_width)]);
        }
      }
    }
  });
  return dx;
}

std::vector<double> ReferenceConvBackwardWeights(const ConvProblem& p, const std::vector<double>& x,
                                                 const std::vector<double>& dy) {
  const int64_t k = p.kernel, pixels = p.out_height * p.out_width;
  std::vector<double> dw(static_cast<size_t>(p.weight_size()), 0.0);
  ParallelFor(p.in_channels, [&](int64_t c) {
    std::vector<double> taps(static_cast<size_t>(pixels));
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t ky = 0; ky < k; ++ky) {
        for (int64_t kx = 0; kx < k; ++kx) {
          Taps(p, &x[static_cast<size_t>((n * p.in_channels + c) * p.in_height * p.in_width)], ky, kx, taps.data());
          for (int64_t o = 0; o < p.out_channels; ++o) {
            const double* dyp = &dy[static_cast<size_t>((n * p.out_channels + o) * pixels)];
            double sum = 0.0;
            for (int64_t i = 0; i < pixels; ++i) sum += dyp[i] * taps[static_cast<size_t>(i)];
            dw[static_cast<size_t>(((o * p.in_channels + c) * k + ky) * k + kx)] += sum;
          }
        }
      }
    }
  });
  return dw;
}

}  // namespace gantry::testing
