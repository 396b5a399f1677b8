// A generate job as the request `gantry-worker generate` would make of its flags: the
// pool runs it through the same entry point (RunGenerateJob, worker/generate/generate_job.h).
#pragma once

#include "gantry/v1/job.pb.h"
#include "worker/generate/generate_job.h"

namespace gantry {

// --run is the source run's folder (Job.checkpoint.run_folder); --out is
// RUN/generate-<name> (the job's id when the spec names none); every field of
// Job.generate left unset keeps the command's default. should_stop is unset.
GenerateRequest GenerateRequestFor(const v1::Job& job);

}  // namespace gantry
