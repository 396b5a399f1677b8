// The packed image set a run with --dataset images trains on, and the run's image DCGAN
// fitted to it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "runspec/train_config.h"
#include "worker/data/packed_images_format.h"

namespace gantry {

// The file to open: --data-dir itself when it is a file (a set made by make-dataset), or
// for a folder of images its pack in the cache beside the runs (image_set_cache.h),
// packed now at the run's --image-size and --channels when the cache lacks it. For one
// rank (the others open the path it found).
absl::StatusOr<std::string> PackedSetForRun(const TrainConfig& config, const std::string& data_dir);

// The image DCGAN takes the set's image size and channels where the run left them open
// (`given`: the settings the run named); a setting the run gave that differs from the
// set is refused, naming the file, both values and the fix. So is a set the DCGAN cannot
// be built for (not 32, 64 or 128 px; more than 4 channels).
absl::Status FitRunToImageSet(TrainConfig& config, const RawSettings& given, const PackedImagesInfo& set,
                              const std::string& path);

}  // namespace gantry
