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

// run.json's "settings": what was given, plus the settings whose defaults may change
// (--predict, --lr-scaling) or that the run took from its data (the image DCGAN's size
// and channels), so neither a later change of a default nor of the data can change what
// resuming, generating from or exporting the run builds. Also what a checkpoint's
// settings record is made of (runspec/resume_rules.h).
RawSettings RunJsonSettings(const TrainConfig& config, const RawSettings& settings);

// The current time as run.json writes it: "2026-12-07T12:00:00Z".
std::string UtcNow();

}  // namespace gantry
