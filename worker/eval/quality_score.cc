#include "worker/eval/quality_score.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Dense"
#include "common/check.h"

namespace gantry {
namespace {

using Matrix = Eigen::MatrixXd;

Matrix AsMatrix(const FeatureStats& s) {
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      s.covariance.data(), s.dim, s.dim);
}

// The square root of a symmetric positive semi-definite matrix.
Matrix SqrtPsd(const Matrix& m) {
  Eigen::SelfAdjointEigenSolver<Matrix> eig(m);
  const Eigen::VectorXd roots = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return eig.eigenvectors() * roots.asDiagonal() * eig.eigenvectors().transpose();
}

double Entropy(const double* p, int64_t k) {
  double h = 0;
  for (int64_t j = 0; j < k; ++j) {
    if (p[j] > 0) h -= p[j] * std::log(p[j]);
  }
  return h;
}

}  // namespace

FeatureStats ComputeFeatureStats(const float* features, int64_t n, int64_t dim) {
  FeatureStats s;
  s.dim = dim;
  s.count = n;
  s.mean.assign(static_cast<size_t>(dim), 0.0);
  s.covariance.assign(static_cast<size_t>(dim * dim), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dim; ++d) s.mean[d] += features[i * dim + d];
  }
  for (double& m : s.mean) m /= static_cast<double>(std::max<int64_t>(1, n));
  if (n < 2) return s;
  std::vector<double> centred(static_cast<size_t>(dim));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dim; ++d) centred[d] = features[i * dim + d] - s.mean[d];
    for (int64_t a = 0; a < dim; ++a) {
      for (int64_t b = a; b < dim; ++b) s.covariance[a * dim + b] += centred[a] * centred[b];
    }
  }
  for (int64_t a = 0; a < dim; ++a) {
    for (int64_t b = a; b < dim; ++b) {
      s.covariance[a * dim + b] /= static_cast<double>(n - 1);
      s.covariance[b * dim + a] = s.covariance[a * dim + b];
    }
  }
  return s;
}

double FrechetDistance(const FeatureStats& a, const FeatureStats& b) {
  CHECK_EQ(a.dim, b.dim) << "Fréchet distance of features of different sizes";
  double mean_term = 0;
  for (int64_t d = 0; d < a.dim; ++d) mean_term += (a.mean[d] - b.mean[d]) * (a.mean[d] - b.mean[d]);
  const Matrix ca = AsMatrix(a), cb = AsMatrix(b);
  const Matrix root_a = SqrtPsd(ca);
  const Matrix middle = root_a * cb * root_a;
  Eigen::SelfAdjointEigenSolver<Matrix> eig(0.5 * (middle + middle.transpose()), Eigen::EigenvaluesOnly);
  const double trace_root = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().sum();
  // Round-off can take an identical pair a hair below zero.
  return std::max(0.0, mean_term + ca.trace() + cb.trace() - 2.0 * trace_root);
}

void SoftmaxRows(std::vector<float>& logits, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; ++i) {
    float* row = logits.data() + i * k;
    const float top = *std::max_element(row, row + k);
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += std::exp(static_cast<double>(row[j] - top));
    for (int64_t j = 0; j < k; ++j) row[j] = static_cast<float>(std::exp(static_cast<double>(row[j] - top)) / sum);
  }
}

ClassScores ScoreClasses(const std::vector<float>& probabilities, int64_t n, int64_t k) {
  ClassScores s;
  if (n <= 0) return s;
  std::vector<double> marginal(static_cast<size_t>(k), 0.0), row(static_cast<size_t>(k));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) row[j] = probabilities[i * k + j];
    s.mean_entropy += Entropy(row.data(), k);
    s.mean_confidence += *std::max_element(row.begin(), row.end());
    for (int64_t j = 0; j < k; ++j) marginal[j] += row[j] / static_cast<double>(n);
  }
  s.mean_entropy /= static_cast<double>(n);
  s.mean_confidence /= static_cast<double>(n);
  s.marginal_entropy = Entropy(marginal.data(), k);
  return s;
}

}  // namespace gantry
