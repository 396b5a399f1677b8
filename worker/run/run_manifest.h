// run.json: the resolved configuration of a run with the versions and host that ran it,
// so a run folder alone says how to reproduce it, and the settings as given ("settings":
// name -> value), from which `gantry-worker train --resume` rebuilds the configuration.
#pragma once

#include <string>

#include "runspec/train_config.h"

namespace gantry {

// `backend` names the kernel backend and `product_path` says how it runs the products at
// the run's precision (Backend::ProductPath); `data_dir` is the resolved data folder;
// `world_size` ranks joined over `transport` ("local" or "mpi"). `settings` are the ones
// `config` was resolved from.
std::string RunManifestJson(const TrainConfig& config, const RawSettings& settings, const std::string& data_dir,
                            int64_t train_images,
                            const std::string& backend, const std::string& product_path, int world_size,
                            const std::string& transport);

}  // namespace gantry
