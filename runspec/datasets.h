// The datasets a run can name (--dataset) and where each lives when no --data-dir is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gantry {

// "mnist", "fashion-mnist" (IDX image files), "flow" (cases written by
// `gantry-worker make-flow`), "images" (a packed image set written by `gantry-worker
// make-dataset`, or a folder of images packed on first use): the names --dataset accepts.
const std::vector<std::string>& DatasetNames();

// Where a dataset lives when no --data-dir is given: "fashion-mnist" is the Debian
// package dataset-fashion-mnist's folder; "mnist" and any other name have no default
// and give "" (mnist, flow and images have no default folder).
std::string DefaultDataDir(const std::string& dataset);

// Whether the run's dataset and model go together, once all its settings are known (so
// not one setting at a time): the flow cases train a conditional model on frame pairs
// and have no default folder. INVALID_ARGUMENT naming the settings and the fix.
absl::Status CheckDatasetFitsModel(const std::string& dataset, const std::string& model, const std::string& data_dir);

}  // namespace gantry
