// Renders the generator's images for a fixed noise batch: an 8x8 PNG grid to look at (in
// colour for colour images) and the same images as a float32 .npy ([N,C,H,W], values in
// [-1,1]) to load.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "worker/layers/sequential.h"

namespace gantry {

// Runs G in inference mode (BatchNorm on running statistics, as the TF tutorial's
// generate_and_save_images does) on `noise` and writes both files.
// `images`, when given, receives the images (on the CPU, [N,C,H,W]).
absl::Status WriteGeneratorSamples(Backend& backend, const Sequential& generator, const Tensor& noise,
                                   const std::string& png_path, const std::string& npy_path, Tensor* images = nullptr);

// G's images for `noise` (any generator input) in inference mode, on the CPU, with the
// matrix products' operands in `precision`.
Tensor GenerateImages(Backend& backend, const Sequential& generator, const Tensor& noise,
                      MathPrecision precision = MathPrecision::kFp32);

}  // namespace gantry
