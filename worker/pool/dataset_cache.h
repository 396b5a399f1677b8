// The training images of the pool's recent job, kept between jobs: consecutive jobs on
// the same data folder (a sweep after a sweep) skip reading and decoding it again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "worker/data/mnist_dataset.h"

namespace gantry {

class DatasetCache {
 public:
  // The training set in `dir`, cut to its first `limit_images` images when 0 < limit <
  // its size (--limit-images), refused when its images are not of the shape `need`
  // says (null: any). The reference is valid until the next call.
  absl::StatusOr<const ImageDataset*> Get(const std::string& dir, int64_t limit_images,
                                          const ImageRequirement* need = nullptr);

 private:
  std::string dir_;
  std::optional<ImageDataset> full_;
  std::optional<ImageDataset> limited_;
};

}  // namespace gantry
