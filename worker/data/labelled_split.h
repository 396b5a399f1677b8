// A packed image set with class folders (make-dataset --labels folders) as the quality
// judge trains on it (`gantry-worker train-judge --dataset images`): every record as
// floats in [-1, 1], with its class, split by a seeded permutation into a training part
// and a held-out test part. The set is small enough to hold as floats when a classifier
// is to be trained on it once (about 49 KB an image at 64 px).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "worker/data/mnist_dataset.h"
#include "worker/data/packed_images.h"

namespace gantry {

struct LabelledSplit {
  ImageDataset train, test;
};

// The first `test_fraction` of a permutation drawn from `seed` is the test part (at least
// one image), the rest the training part. INVALID_ARGUMENT naming the file for a set
// without labels (the label-free score needs none), with fewer than 2 classes or more than
// 256 (ImageDataset's labels are bytes), or with too few images to split.
absl::StatusOr<LabelledSplit> SplitLabelledImages(const PackedImages& set, double test_fraction, uint64_t seed);

}  // namespace gantry
