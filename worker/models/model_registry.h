// Which GanModel a run trains: --model names it (runspec/model_config.h lists the names the
// coordinator and the CLI accept; a test checks both lists agree).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runspec/train_config.h"
#include "worker/models/gan_model.h"

namespace gantry {

// The names MakeModel builds, in registration order.
std::vector<std::string> RegisteredModels();

// A fresh model (zero weights until Initialize) for config.model, its buffers on
// `device`. INVALID_ARGUMENT naming the known models for any other name.
absl::StatusOr<std::unique_ptr<GanModel>> MakeModel(const TrainConfig& config, Device device = Device::kCpu);

}  // namespace gantry
