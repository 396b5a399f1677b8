// A rollout job as the request `gantry-worker rollout` would make of its flags: the
// pool runs it through the same entry point (RunRolloutJob, worker/rollout/rollout_job.h).
#pragma once

#include "gantry/v1/job.pb.h"
#include "worker/rollout/rollout_job.h"

namespace gantry {

// --run is the source run's folder, as the coordinator set it at submission
// (Job.checkpoint.run_folder); --out is the job's own folder, RUN/rollout-<case>-<job id>
// (RolloutJobOutputFolder), so two rollouts of one run over one case never share one;
// every field of Job.rollout left unset keeps the command's default. should_stop is unset.
RolloutRequest RolloutRequestFor(const v1::Job& job);

}  // namespace gantry
