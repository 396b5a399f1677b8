// Which frame pairs of a set of flow cases train and which validate.
//
// The rule: with two or more cases the LAST case (cases are sorted by folder name)
// is held out whole for validation and every other case trains, so validation measures
// a case the model never saw. With one case its time axis is cut instead: the last
// fifth of its pairs (at least one) validate, and training uses only the pairs whose
// target frame comes before the first validation input, so no frame is in both sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/flow_case.h"

namespace gantry {

// Pairs (frame t -> frame t + horizon) of case `case_index` for t in [first_t, end_t).
struct FlowPairRange {
  int case_index = 0;
  int64_t first_t = 0;
  int64_t end_t = 0;
  int64_t pairs() const { return end_t - first_t; }
  bool operator==(const FlowPairRange&) const = default;
};

struct FlowSplit {
  std::vector<FlowPairRange> train;
  std::vector<FlowPairRange> validation;
  std::string rule;  // the rule applied, in words, for the log and run.json
};

// The split of `cases` for --horizon `horizon` (>= 1). INVALID_ARGUMENT naming the case
// and the fix when a case has no frame `horizon` steps after its first, or when a single
// case has too few frames to give both sets a pair.
absl::StatusOr<FlowSplit> SplitFlowPairs(const std::vector<FlowCase>& cases, int64_t horizon);

// The inputs of `train` (a split's training pairs) whose whole window of `unroll` steps of
// `horizon` frames lies in the frames those pairs train on: each range loses its last
// (unroll - 1) x horizon inputs, so no window reaches a validation frame. INVALID_ARGUMENT
// naming the case and the fix when a range keeps no input.
absl::StatusOr<std::vector<FlowPairRange>> UnrolledWindows(const std::vector<FlowCase>& cases,
                                                           const std::vector<FlowPairRange>& train, int64_t unroll,
                                                           int64_t horizon);

}  // namespace gantry
