// MNIST-format image sets (MNIST, Fashion-MNIST) loaded into memory as training data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Images in NCHW order as floats in [-1, 1] (byte p becomes p / 127.5 - 1, so 0 is -1
// and 255 is exactly 1, matching the generator's tanh range), with one label each.
struct ImageDataset {
  int64_t count = 0;
  int64_t channels = 1;
  int64_t height = 0;
  int64_t width = 0;
  std::vector<float> pixels;    // count * channels * height * width
  std::vector<uint8_t> labels;  // count
  std::string images_path;      // the IDX file the images came from (for messages)

  int64_t sample_numel() const { return channels * height * width; }
};

// The shape the images must have, as the model that trains on them says
// (GanModel::SampleShape), and who says so, for the message: "--model dcgan".
struct ImageRequirement {
  int64_t channels = 1;
  int64_t height = 0;
  int64_t width = 0;
  std::string needed_by;
};

// OK when `data` has the required shape; else INVALID_ARGUMENT naming the images file,
// the size found and the size needed.
absl::Status CheckImagesFit(const ImageDataset& data, const ImageRequirement& need);

// Keeps only the first `count` images (--limit-images); no change when count <= 0 or
// count >= the images held.
void KeepFirstImages(ImageDataset& data, int64_t count);

// Loads `dir`/train-images-idx3-ubyte and `dir`/train-labels-idx1-ubyte (t10k-* when
// !train), each raw or with a .gz suffix (the raw file wins when both exist). Fails
// when `dir` is empty or lacks the files (naming the files expected there), when
// either file is malformed, when the image and label counts differ, or (with `need`)
// when the images are not of the required shape. Both headers are checked before
// either payload is read, so a folder of the wrong images is refused at once.
absl::StatusOr<ImageDataset> LoadMnistDir(const std::string& dir, bool train = true,
                                          const ImageRequirement* need = nullptr);

}  // namespace gantry
