// How gantry-worker logs: rank 0 logs info and above to the console and to extra sinks
// (a run's log.txt, or the pool's per-job log); other ranks log warnings and errors to
// the console only, each line tagged with the rank.
#pragma once

#include <string>
#include <vector>

#include "spdlog/common.h"

namespace gantry {

// Makes the default logger for `rank`; `rank0_sinks` are added on rank 0 only.
void SetUpWorkerLogging(int rank, const std::vector<spdlog::sink_ptr>& rank0_sinks = {});

// The same, with rank 0 also appending to `log_path` when it is not empty (a training
// run's log.txt; appended to on resume). A LogSetup for RunTrainJob. A log.txt that is
// not a regular file (a folder, a FIFO, a link) is not written: a warning says so.
void SetUpRunLogging(int rank, const std::string& log_path);

}  // namespace gantry
