// The exit codes of `gantry`, a contract for scripts (also listed in `gantry --help`).
#pragma once

#include <grpcpp/support/status.h>

namespace gantry::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,          // anything not listed below (an internal error, a bad reply)
  kExitUsage = 2,            // bad flags or arguments; a request the coordinator found invalid
  kExitNotFound = 3,         // no such job (or group)
  kExitUnauthenticated = 4,  // missing or wrong token
  kExitUnavailable = 5,      // coordinator unreachable, or it did not answer in time
  kExitConflict = 6,         // the job's state forbids it (e.g. cancelling a finished job)
  kExitJobFailed = 7,        // watch: the job ended FAILED
  kExitJobCancelled = 8,     // watch: the job ended CANCELLED
};

// The exit code for a failed call.
ExitCode ExitCodeFor(grpc::StatusCode code);

// The table above as help text.
const char* ExitCodesHelp();

}  // namespace gantry::cli
