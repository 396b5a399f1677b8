#include "worker/eval/image_quality.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// The number of rows of `size` floats of `dim` features, or INVALID_ARGUMENT naming `what`.
absl::StatusOr<int64_t> FeatureRowCount(size_t size, int64_t dim, const char* what) {
  if (dim <= 0 || size % static_cast<size_t>(dim) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", size, " floats are not rows of ", dim, " features"));
  }
  const int64_t rows = static_cast<int64_t>(size) / dim;
  if (rows < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", rows, " image(s); the Fréchet distance and KID need at least 2"));
  }
  return rows;
}

}  // namespace

absl::StatusOr<ReferenceFeatures> MakeReferenceFeatures(std::vector<float> rows, int64_t dim) {
  absl::StatusOr<int64_t> count = FeatureRowCount(rows.size(), dim, "reference features");
  if (!count.ok()) return count.status();
  ReferenceFeatures reference;
  reference.dim = dim;
  reference.count = *count;
  reference.stats = ComputeFeatureStats(rows.data(), *count, dim);
  reference.rows = std::move(rows);
  return reference;
}

absl::StatusOr<ImageQuality> ScoreImageQuality(const std::vector<float>& generated, const ReferenceFeatures& reference,
                                               const KidOptions& kid) {
  absl::StatusOr<int64_t> count = FeatureRowCount(generated.size(), reference.dim, "generated features");
  if (!count.ok()) return count.status();
  ImageQuality q;
  q.fd = FrechetDistance(ComputeFeatureStats(generated.data(), *count, reference.dim), reference.stats);
  const KidEstimate estimate =
      KernelInceptionDistance(generated.data(), *count, reference.rows.data(), reference.count, reference.dim, kid);
  q.kid = estimate.kid;
  q.kid_std = estimate.std;
  q.kid_subset_size = estimate.subset_size;
  return q;
}

}  // namespace gantry
