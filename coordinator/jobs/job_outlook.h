// How far a running job has come and when it may end, from what the coordinator knows:
// the spec (epochs per batch size, the sweep, max_steps) and the latest progress report
// (batch size, epoch, step, steps per epoch, recent samples/s).
//
// Steps per epoch are known only for the batch size in progress; another batch size of
// the sweep is assumed to go over the same images (steps x batch size per epoch), so
// its steps are estimated. The ETA assumes the current samples/s for the rest of the
// run: a sweep towards larger batches usually ends sooner than it says.
#pragma once

#include <optional>

#include "gantry/v1/job.pb.h"

namespace gantry {

struct JobOutlook {
  double fraction_done = 0;           // in [0, 1], by samples
  std::optional<double> eta_seconds;  // unset: no throughput reported yet
};

// The outlook of `job` from its progress; unset when it has reported none, or when its
// spec does not resolve (it did when submitted: only a newer coordinator could differ).
// A finished (SUCCEEDED) job is done; other ended jobs keep the fraction of their last
// report with no ETA. A rollout job's fraction is its model steps done, with no ETA.
std::optional<JobOutlook> OutlookOf(const v1::Job& job);

}  // namespace gantry
