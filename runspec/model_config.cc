#include "runspec/model_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

const std::vector<std::string>& ModelNames() {
  static const auto* names = new std::vector<std::string>{"dcgan", "pix2pix"};
  return *names;
}

const char* NextFramePredictionName(NextFramePrediction p) {
  return p == NextFramePrediction::kDelta ? "delta" : "frame";
}

const char* UnrollLossName(UnrollLoss l) { return l == UnrollLoss::kLast ? "last" : "every"; }

int64_t UnrollConfig::StepsAt(int64_t epoch) const {
  if (curriculum_epochs <= 0) return steps;
  return std::min(steps, 1 + std::max<int64_t>(epoch, 0) / curriculum_epochs);
}

std::string Pix2pixImageSizeProblem(int64_t size) {
  const bool power_of_two = size > 0 && (size & (size - 1)) == 0;
  if (power_of_two && size >= Pix2pixConfig::kMinImageSize) return "";
  // The U-Net halves the image once per down block and the PatchGAN three times more
  // than it has logits a side, so the size must halve cleanly down to the bottleneck.
  int64_t below = Pix2pixConfig::kMinImageSize;
  while (below * 2 <= size) below *= 2;
  return absl::StrCat("the U-Net needs a power of two >= ", Pix2pixConfig::kMinImageSize,
                      " (each down block halves it); use ", size < Pix2pixConfig::kMinImageSize ? Pix2pixConfig::kMinImageSize : below,
                      size < Pix2pixConfig::kMinImageSize ? "" : absl::StrCat(" or ", below * 2));
}

std::vector<int64_t> ImageDcganWidths(int64_t base_filters, int64_t image_size) {
  int64_t blocks = 0;
  for (int64_t side = 4; side < image_size; side *= 2) ++blocks;
  std::vector<int64_t> widths;
  for (int64_t i = blocks - 1; i >= 0; --i) {
    widths.push_back(base_filters * std::min<int64_t>(ImageDcganConfig::kMaxMultiplier, int64_t{1} << i));
  }
  return widths;
}

std::string ImageDcganImageSizeProblem(int64_t size) {
  if (size == 32 || size == 64 || size == 128) return "";
  return "the image DCGAN is built for 32, 64 or 128 px (4x4 doubled 3, 4 or 5 times); pack the images at one "
         "of those sizes (gantry-worker make-dataset --image-size)";
}

}  // namespace gantry
