#include "worker/eval/kernel_inception_distance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "Eigen/Dense"
#include "common/check.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using KidRows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using KidFloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr uint64_t kKidStream = 0x6b6964ull;  // "kid"
// Rows of a kernel matrix computed at a time: 256 x 1,024 doubles (2 MiB) per tile.
constexpr int64_t kKidTileRows = 256;

KidRows KidDoubleRows(const float* rows, int64_t n, int64_t dim) {
  return Eigen::Map<const KidFloatRows>(rows, n, dim).cast<double>();
}

// m distinct indices below n: the first m places of a partial Fisher-Yates shuffle.
std::vector<int64_t> DrawDistinctRows(Rng& rng, int64_t n, int64_t m) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  for (int64_t i = 0; i < m; ++i) {
    std::swap(order[i], order[i + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(n - i)))]);
  }
  order.resize(static_cast<size_t>(m));
  return order;
}

// Column s is 1 at the rows subset s takes from one set (its x rows, or its y rows), else 0.
Eigen::MatrixXd SubsetMembership(const std::vector<KidSubset>& subsets, int64_t n, bool x_rows) {
  Eigen::MatrixXd mask = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(subsets.size()));
  for (size_t s = 0; s < subsets.size(); ++s) {
    for (int64_t row : x_rows ? subsets[s].x : subsets[s].y) mask(row, static_cast<Eigen::Index>(s)) = 1.0;
  }
  return mask;
}

// Per subset s: the sum of k(a_i, b_j) over the rows i of `a` and j of `b` that s takes
// (columns s of a_mask and b_mask). The kernel matrix is made a tile of a's rows at a time,
// K = (A B^T / d + 1)^3, and each tile adds a_mask^T (K b_mask) restricted to its rows.
Eigen::VectorXd SubsetKernelSums(const KidRows& a, const KidRows& b, const Eigen::MatrixXd& a_mask,
                                 const Eigen::MatrixXd& b_mask) {
  const double inv_dim = 1.0 / static_cast<double>(a.cols());
  Eigen::VectorXd sums = Eigen::VectorXd::Zero(a_mask.cols());
  for (Eigen::Index begin = 0; begin < a.rows(); begin += kKidTileRows) {
    const Eigen::Index rows = std::min<Eigen::Index>(kKidTileRows, a.rows() - begin);
    Eigen::MatrixXd kernel = a.middleRows(begin, rows) * b.transpose();
    kernel = (kernel.array() * inv_dim + 1.0).cube().matrix();
    const Eigen::MatrixXd by_subset = kernel * b_mask;  // rows x subsets
    sums += (a_mask.middleRows(begin, rows).array() * by_subset.array()).colwise().sum().matrix().transpose();
  }
  return sums;
}

// Per subset s: the sum of k(a_i, a_i) over the rows i s takes (the diagonal that the
// unbiased within-set terms leave out).
Eigen::VectorXd SubsetDiagonalSums(const KidRows& a, const Eigen::MatrixXd& a_mask) {
  const double inv_dim = 1.0 / static_cast<double>(a.cols());
  const Eigen::VectorXd diagonal = (a.rowwise().squaredNorm().array() * inv_dim + 1.0).cube().matrix();
  return a_mask.transpose() * diagonal;
}

}  // namespace

std::vector<KidSubset> DrawKidSubsets(int64_t n_x, int64_t n_y, const KidOptions& options) {
  const int64_t m = std::min({options.subset_size, n_x, n_y});
  Rng rng(Mix64(options.seed ^ kKidStream));
  std::vector<KidSubset> subsets(static_cast<size_t>(std::max<int64_t>(0, options.subsets)));
  for (KidSubset& s : subsets) {
    s.x = DrawDistinctRows(rng, n_x, m);
    s.y = DrawDistinctRows(rng, n_y, m);
  }
  return subsets;
}

KidEstimate KernelInceptionDistance(const float* x, int64_t n_x, const float* y, int64_t n_y, int64_t dim,
                                    const KidOptions& options) {
  CHECK_GE(n_x, 2) << "KID needs at least 2 rows of each set";
  CHECK_GE(n_y, 2) << "KID needs at least 2 rows of each set";
  CHECK_GE(dim, 1) << "KID of empty feature rows";
  CHECK_GE(options.subsets, 1) << "KID over no subsets";
  CHECK_GE(options.subset_size, 2) << "KID subsets of fewer than 2 rows";
  // Where a subset takes both sets whole, every subset is the same rows, and the masked
  // sums below give every subset the same bits: one is computed and stands for all.
  const bool whole = options.subset_size >= n_x && n_x == n_y;
  KidOptions drawn = options;
  if (whole) drawn.subsets = 1;
  const std::vector<KidSubset> subsets = DrawKidSubsets(n_x, n_y, drawn);
  const int64_t m = static_cast<int64_t>(subsets[0].x.size());
  const KidRows xs = KidDoubleRows(x, n_x, dim), ys = KidDoubleRows(y, n_y, dim);
  const Eigen::MatrixXd x_mask = SubsetMembership(subsets, n_x, true), y_mask = SubsetMembership(subsets, n_y, false);
  const Eigen::VectorXd xx = SubsetKernelSums(xs, xs, x_mask, x_mask) - SubsetDiagonalSums(xs, x_mask);
  const Eigen::VectorXd yy = SubsetKernelSums(ys, ys, y_mask, y_mask) - SubsetDiagonalSums(ys, y_mask);
  const Eigen::VectorXd xy = SubsetKernelSums(xs, ys, x_mask, y_mask);
  const double md = static_cast<double>(m);
  const Eigen::VectorXd mmd = (xx + yy) / (md * (md - 1.0)) - xy * (2.0 / (md * md));
  KidEstimate e;
  e.subset_size = m;
  e.subsets = options.subsets;
  e.kid = mmd.mean();
  e.std = std::sqrt((mmd.array() - e.kid).square().mean());
  return e;
}

}  // namespace gantry
