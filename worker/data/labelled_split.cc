#include "worker/data/labelled_split.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "worker/data/batch_sampler.h"

namespace gantry {
namespace {

constexpr int64_t kMaxClasses = 256;
constexpr int64_t kMinImages = 10;

ImageDataset EmptyLike(const PackedImages& set, int64_t count) {
  const PackedImagesInfo& info = set.info();
  ImageDataset d;
  d.count = count;
  d.channels = info.channels;
  d.height = d.width = info.image_size;
  d.images_path = set.path();
  d.pixels.resize(static_cast<size_t>(count * d.sample_numel()));
  d.labels.resize(static_cast<size_t>(count));
  return d;
}

void CopyRecord(const PackedImages& set, int64_t record, ImageDataset& into, int64_t row) {
  const int64_t numel = into.sample_numel();
  const uint8_t* bytes = set.record(record);
  float* out = into.pixels.data() + row * numel;
  for (int64_t j = 0; j < numel; ++j) out[j] = static_cast<float>(bytes[j]) / 127.5f - 1.0f;
  into.labels[static_cast<size_t>(row)] = static_cast<uint8_t>(set.label(record));
}

}  // namespace

absl::StatusOr<LabelledSplit> SplitLabelledImages(const PackedImages& set, double test_fraction, uint64_t seed) {
  const PackedImagesInfo& info = set.info();
  const int64_t classes = static_cast<int64_t>(info.class_names.size());
  if (classes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(set.path(), " has no labels (it was packed with --labels none, "
                                                   "or from a folder without class folders): a judge needs them; "
                                                   "runs score such a set without labels"));
  }
  if (classes < 2 || classes > kMaxClasses) {
    return absl::InvalidArgumentError(absl::StrCat(set.path(), " has ", classes, " classes; a judge is trained on 2 to ",
                                                   kMaxClasses));
  }
  if (info.count < kMinImages) {
    return absl::InvalidArgumentError(absl::StrCat(set.path(), " holds ", info.count,
                                                   " images: too few to split into training and test images (",
                                                   kMinImages, " at least)"));
  }
  const int64_t test = std::clamp<int64_t>(static_cast<int64_t>(std::llround(test_fraction * info.count)), 1,
                                           info.count - 1);
  const std::vector<int64_t> order = EpochSampler(info.count, seed).Permutation(0);
  LabelledSplit split{EmptyLike(set, info.count - test), EmptyLike(set, test)};
  for (int64_t i = 0; i < info.count; ++i) {
    const int64_t record = order[static_cast<size_t>(i)];
    if (i < test) {
      CopyRecord(set, record, split.test, i);
    } else {
      CopyRecord(set, record, split.train, i - test);
    }
  }
  return split;
}

}  // namespace gantry
