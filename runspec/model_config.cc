#include "runspec/model_config.h"

#include "absl/strings/str_cat.h"

namespace gantry {

const std::vector<std::string>& ModelNames() {
  static const auto* names = new std::vector<std::string>{"dcgan", "pix2pix"};
  return *names;
}

const char* NextFramePredictionName(NextFramePrediction p) {
  return p == NextFramePrediction::kDelta ? "delta" : "frame";
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

}  // namespace gantry
