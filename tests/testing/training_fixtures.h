// Shared by the checkpoint and resume tests: tiny deterministic data, a quick run
// configuration, and real (DCGAN-shaped) training states.
#pragma once

#include <string>
#include <vector>

#include "runspec/train_config.h"
#include "worker/checkpoint/training_state.h"
#include "worker/data/mnist_dataset.h"

namespace gantry::testing {

// `count` deterministic 1x28x28 images in [-1, 1].
ImageDataset TinyImages(int64_t count);

// Batch 4, 2 epochs, a checkpoint every 4 steps, no progress lines, run folder `out`.
TrainConfig QuickRunConfig(const std::string& out);

// The state of a freshly initialised run of `config` on `data` (one rank, at the start).
TrainingState FreshState(const TrainConfig& config, const ImageDataset& data);

// A new empty folder under the test temp dir, unique to this call (mkdtemp).
std::string FreshTestDir(const std::string& name);

// Whether two float arrays hold the same bits (not just equal values).
bool SameBits(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace gantry::testing
