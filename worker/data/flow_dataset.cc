#include "worker/data/flow_dataset.h"

#include "common/status_macros.h"
#include "worker/tensor/random.h"

namespace gantry {

absl::StatusOr<FlowDataset> LoadFlowDataset(const std::string& root, const FlowPairOptions& options) {
  FlowDataset out;
  ASSIGN_OR_RETURN(const std::vector<std::string> dirs, FindFlowCases(root));
  for (const std::string& dir : dirs) {
    ASSIGN_OR_RETURN(FlowCase c, LoadFlowCase(dir));
    out.cases.push_back(std::move(c));
  }
  ASSIGN_OR_RETURN(out.split, SplitFlowPairs(out.cases, options.horizon));
  ASSIGN_OR_RETURN(const std::vector<FlowPairRange> windows,
                   UnrolledWindows(out.cases, out.split.train, options.unroll, options.horizon));
  ASSIGN_OR_RETURN(out.train, MakeFlowPairs(out.cases, windows, options));
  FlowPairOptions held = options;
  held.unroll = 1;  // validation scores the one-step prediction, whatever the training unrolls
  held.seed = Mix64(options.seed + 1);  // validation crops do not repeat the training draws
  held.max_rows = 0;
  held.input_noise = 0.0f;  // validation scores the task itself: clean inputs
  ASSIGN_OR_RETURN(out.validation, MakeFlowPairs(out.cases, out.split.validation, held));
  return out;
}

}  // namespace gantry
