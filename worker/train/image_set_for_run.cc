#include "worker/train/image_set_for_run.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/data/image_set_cache.h"

namespace gantry {
namespace {

// One of the set's numbers against the run's: taken when the run left it open.
absl::Status FitOne(const char* setting, int64_t& value, int64_t from_set, const RawSettings& given,
                    const std::string& path) {
  if (!given.contains(setting)) {
    value = from_set;
    return absl::OkStatus();
  }
  if (value == from_set) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", setting, " ", value, ", but ", path, " was packed with ",
                                                 from_set, ": leave --", setting, " out to train at the set's, or "
                                                 "pack the images again with gantry-worker make-dataset --", setting,
                                                 " ", value));
}

}  // namespace

absl::StatusOr<std::string> PackedSetForRun(const TrainConfig& config, const std::string& data_dir) {
  struct stat st {};
  if (::stat(data_dir.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return data_dir;
  PackRequest request;
  request.from = data_dir;
  request.image_size = config.image_dcgan.image_size;
  request.channels = config.image_dcgan.channels;
  return EnsureFolderPacked(request, ImageCacheDirFor(config.out));
}

absl::Status FitRunToImageSet(TrainConfig& config, const RawSettings& given, const PackedImagesInfo& set,
                              const std::string& path) {
  ImageDcganConfig& dcgan = config.image_dcgan;
  RETURN_IF_ERROR(FitOne("image-size", dcgan.image_size, set.image_size, given, path));
  RETURN_IF_ERROR(FitOne("channels", dcgan.channels, set.channels, given, path));
  config.pix2pix.image_size = dcgan.image_size;  // the one --image-size, as the settings keep it
  if (const std::string problem = ImageDcganImageSizeProblem(dcgan.image_size); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " holds ", dcgan.image_size, " px images: ", problem));
  }
  if (dcgan.channels < 1 || dcgan.channels > ImageDcganConfig::kMaxChannels) {
    return absl::InvalidArgumentError(absl::StrCat(path, " holds images of ", dcgan.channels,
                                                   " channels; the DCGAN takes 1 to ", ImageDcganConfig::kMaxChannels));
  }
  return absl::OkStatus();
}

}  // namespace gantry
