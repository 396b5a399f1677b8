// The flow workload's training and validation rows from a data root (--dataset flow
// --data-dir ROOT): the cases found under ROOT, split (flow_split.h) and cropped into
// rows {7, S, S} (flow_pairs.h); with --unroll M the training rows are windows
// {4 + 3 M, S, S} and the validation rows stay one-step pairs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_pairs.h"
#include "worker/data/flow_split.h"
#include "worker/data/mnist_dataset.h"

namespace gantry {

struct FlowDataset {
  std::vector<FlowCase> cases;
  FlowSplit split;
  ImageDataset train;       // max_rows applies here only; windows of options.unroll targets
  ImageDataset validation;  // crops of the held-out pairs, from a seed of their own, without input noise
};

// Loads every case under `root` and makes both row sets with `options`. Each row is
// normalised with its own case's constants; field sizes may differ between cases. Errors as LoadFlowCase, SplitFlowPairs and
// MakeFlowPairs give them (INVALID_ARGUMENT: bad input).
absl::StatusOr<FlowDataset> LoadFlowDataset(const std::string& root, const FlowPairOptions& options);

}  // namespace gantry
