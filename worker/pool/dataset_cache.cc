#include "worker/pool/dataset_cache.h"

namespace gantry {

absl::StatusOr<const ImageDataset*> DatasetCache::Get(const std::string& dir, int64_t limit_images,
                                                      const ImageRequirement* need) {
  if (!full_.has_value() || dir_ != dir) {
    full_.reset();
    limited_.reset();
    absl::StatusOr<ImageDataset> loaded = LoadMnistDir(dir, /*train=*/true, need);
    if (!loaded.ok()) return loaded.status();
    full_ = *std::move(loaded);
    dir_ = dir;
  }
  // The set kept from an earlier job may not suit this job's model.
  if (need != nullptr) {
    if (absl::Status fits = CheckImagesFit(*full_, *need); !fits.ok()) return fits;
  }
  if (limit_images <= 0 || limit_images >= full_->count) return &*full_;
  if (!limited_.has_value() || limited_->count != limit_images) {
    ImageDataset cut;
    cut.count = limit_images;
    cut.channels = full_->channels;
    cut.height = full_->height;
    cut.width = full_->width;
    cut.images_path = full_->images_path;
    const auto pixels = static_cast<std::ptrdiff_t>(limit_images * full_->sample_numel());
    cut.pixels.assign(full_->pixels.begin(), full_->pixels.begin() + pixels);
    cut.labels.assign(full_->labels.begin(), full_->labels.begin() + static_cast<std::ptrdiff_t>(limit_images));
    limited_ = std::move(cut);
  }
  return &*limited_;
}

}  // namespace gantry
