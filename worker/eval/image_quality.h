// The label-free quality of a set of generated images, from feature rows of any fixed
// embedding (random_feature_scorer.h gives them): the Fréchet distance of Gaussians fitted
// to the generated and the reference features (quality_score.h) and the Kernel Inception
// Distance (kernel_inception_distance.h). The reference keeps its rows, not only their
// mean and covariance, since KID compares rows.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/eval/kernel_inception_distance.h"
#include "worker/eval/quality_score.h"

namespace gantry {

// The features of the real images a run's samples are compared with (held-out images,
// computed once per run).
struct ReferenceFeatures {
  int64_t dim = 0;
  int64_t count = 0;
  std::vector<float> rows;  // count x dim, row-major
  FeatureStats stats;       // of the rows
};

// The rows (count x dim) as a reference: keeps them and computes their statistics.
// INVALID_ARGUMENT when rows.size() is not a multiple of dim, or when there are fewer
// than 2 rows (a covariance and KID both need 2).
absl::StatusOr<ReferenceFeatures> MakeReferenceFeatures(std::vector<float> rows, int64_t dim);

struct ImageQuality {
  double fd = 0;       // Fréchet distance to the reference (>= 0; lower is better)
  double kid = 0;      // KID, the mean MMD^2_u over the subsets (about 0 for a match; can be < 0)
  double kid_std = 0;  // the spread of the subsets' estimates (ddof 0)
  int64_t kid_subset_size = 0;
};

// Scores generated feature rows (n x reference.dim) against the reference.
// INVALID_ARGUMENT when the size is not a multiple of the reference's feature size or
// there are fewer than 2 rows.
absl::StatusOr<ImageQuality> ScoreImageQuality(const std::vector<float>& generated, const ReferenceFeatures& reference,
                                               const KidOptions& kid = {});

}  // namespace gantry
