#include "worker/data/flow_split.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::StatusOr<FlowSplit> SplitFlowPairs(const std::vector<FlowCase>& cases, int64_t horizon) {
  if (horizon < 1) return absl::InvalidArgumentError(absl::StrCat("--horizon ", horizon, ": must be >= 1"));
  if (cases.empty()) return absl::InvalidArgumentError("no flow cases to split");
  for (const FlowCase& c : cases) {
    if (c.frames <= horizon) {
      return absl::InvalidArgumentError(absl::StrCat(c.dir, "/frames.npy: ", c.frames, " frame(s) leave no pair ", horizon,
                                                     " frame(s) apart; record more frames (make-flow --frames) or "
                                                     "lower --horizon"));
    }
  }
  FlowSplit split;
  const int n = static_cast<int>(cases.size());
  if (n >= 2) {
    for (int i = 0; i < n; ++i) {
      const FlowPairRange all{i, 0, cases[i].frames - horizon};
      (i + 1 < n ? split.train : split.validation).push_back(all);
    }
    split.rule = absl::StrCat("the last case (", cases.back().dir, ") validates; the other ", n - 1, " train");
    return split;
  }
  const FlowCase& c = cases[0];
  const int64_t pairs = c.frames - horizon;
  const int64_t held = std::max<int64_t>(1, pairs / 5);
  const int64_t cut = pairs - held;  // first validation input frame
  const int64_t train_end = cut - horizon;  // training targets end before `cut`
  if (train_end < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        c.dir, "/frames.npy: ", c.frames, " frames at --horizon ", horizon,
        " are too few to hold out the last fifth for validation and still train; record more frames "
        "(make-flow --frames), lower --horizon, or give a data root with two or more cases"));
  }
  split.train.push_back({0, 0, train_end});
  split.validation.push_back({0, cut, pairs});
  split.rule = absl::StrCat("one case: input frames [", cut, ", ", pairs, ") validate, [0, ", train_end,
                            ") train (no frame in both)");
  return split;
}

absl::StatusOr<std::vector<FlowPairRange>> UnrolledWindows(const std::vector<FlowCase>& cases,
                                                           const std::vector<FlowPairRange>& train, int64_t unroll,
                                                           int64_t horizon) {
  if (unroll < 1) return absl::InvalidArgumentError(absl::StrCat("--unroll ", unroll, ": must be >= 1"));
  std::vector<FlowPairRange> windows;
  for (FlowPairRange range : train) {
    const int64_t frames = range.pairs() + horizon;  // the frames these pairs train on
    range.end_t -= (unroll - 1) * horizon;
    if (range.end_t <= range.first_t) {
      const FlowCase& c = cases.at(range.case_index);
      return absl::InvalidArgumentError(absl::StrCat(
          c.dir, "/frames.npy: --unroll ", unroll, " at --horizon ", horizon, " needs windows of ", unroll * horizon + 1,
          " frames, more than the ", frames, " frames this case trains on (frames ", range.first_t, " to ",
          range.first_t + frames - 1, "); lower --unroll or --horizon, or record more frames (make-flow --frames)"));
    }
    windows.push_back(range);
  }
  return windows;
}

}  // namespace gantry
