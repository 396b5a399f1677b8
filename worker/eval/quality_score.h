// The numbers of the per-epoch quality score (--quality), from a judge classifier's
// outputs on generated images (judge.h):
//   Fréchet distance between Gaussians fitted to the judge's penultimate features of the
//   generated images and of the dataset's test images (the FID recipe, with our own
//   small judge instead of Inception: comparable within one dataset and judge only);
//   class entropy: the mean per-image entropy of the predicted classes (low: each image
//   looks like one clear class) and the entropy of the mean prediction (high, up to
//   log 10: the classes are all generated, no mode collapse); and the mean confidence
//   (the mean of each image's top class probability).
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

// Mean and covariance (divided by n - 1; zero for one row) of n rows of `dim` features.
struct FeatureStats {
  int64_t dim = 0;
  int64_t count = 0;
  std::vector<double> mean;        // dim
  std::vector<double> covariance;  // dim x dim, row-major
  bool operator==(const FeatureStats&) const = default;
};

FeatureStats ComputeFeatureStats(const float* features, int64_t n, int64_t dim);

// ||mean_a - mean_b||^2 + Tr(C_a + C_b - 2 (C_a^1/2 C_b C_a^1/2)^1/2), the squared
// Fréchet (2-Wasserstein) distance of the two Gaussians; the matrix roots come from
// symmetric eigendecompositions, with round-off's tiny negative eigenvalues taken as 0.
double FrechetDistance(const FeatureStats& a, const FeatureStats& b);

struct ClassScores {
  double mean_entropy = 0;      // nats, mean over images of H(p(y|x))
  double marginal_entropy = 0;  // nats, H(mean over images of p(y|x))
  double mean_confidence = 0;   // mean over images of max_y p(y|x)
};

// Row-wise softmax of logits [n, k] (in place).
void SoftmaxRows(std::vector<float>& logits, int64_t n, int64_t k);

// From class probabilities [n, k] (rows summing to 1).
ClassScores ScoreClasses(const std::vector<float>& probabilities, int64_t n, int64_t k);

}  // namespace gantry
