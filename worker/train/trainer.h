// The training run of one process: for each global batch size of the sweep, a fresh
// model from the same seed trained for the configured epochs, writing one epochs.csv
// row and one sample grid per epoch, with progress lines while it runs.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "worker/data/mnist_dataset.h"
#include "worker/tensor/backend.h"
#include "worker/train/epoch_metrics.h"
#include "worker/train/run_folder.h"
#include "worker/train/train_config.h"

namespace gantry {

class Trainer {
 public:
  // All references must outlive the Trainer.
  Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder& folder, const Clock& clock,
          Backend& backend);

  // Trains every batch size in turn; returns all epoch rows (also in epochs.csv).
  absl::StatusOr<std::vector<EpochRow>> Run();

 private:
  absl::StatusOr<std::vector<EpochRow>> TrainOneBatchSize(int64_t batch_size);

  const TrainConfig& config_;
  const ImageDataset& data_;
  const RunFolder& folder_;
  const Clock& clock_;
  Backend& backend_;
};

// A fixed-width table of the rows (one line per epoch) for the terminal.
std::string FormatEpochTable(const std::vector<EpochRow>& rows);

}  // namespace gantry
