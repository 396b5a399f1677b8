// How well a next-frame generator does on held-out flow pairs (rows {7, S, S}: the
// condition in channels 0-3, the true next frame in 4-6; worker/data/flow_pairs.h), and
// the picture of it written after each epoch.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/data/mnist_dataset.h"
#include "worker/layers/sequential.h"

namespace gantry {

struct NextFrameScore {
  double l1 = 0;           // mean |prediction - truth| over all values (normalised units)
  double relative_l2 = 0;  // ||prediction - truth|| / ||truth|| over all values
  // The same for persistence, "the next frame is the input frame" (the condition's first
  // three channels): the baseline a next-frame model must beat to be worth running.
  double persistence_l1 = 0;
  double persistence_relative_l2 = 0;
  int64_t rows = 0;
};

// G in inference mode (BatchNorm on running statistics, dropout off) on every row of
// `rows`, `batch` rows per forward pass, and persistence on the same rows.
absl::StatusOr<NextFrameScore> ScoreNextFrame(Backend& backend, const Sequential& generator, const ImageDataset& rows,
                                              int64_t batch = 16);

// The first `count` rows (fewer when there are fewer): a PNG with one row per pair,
// input | prediction | truth vorticity side by side in diverging colours (normalised
// units, limit 1), and the predictions as a float32 .npy [count, 3, S, S].
absl::Status WriteNextFrameSamples(Backend& backend, const Sequential& generator, const ImageDataset& rows,
                                   int64_t count, const std::string& png_path, const std::string& npy_path);

}  // namespace gantry
