// The exit codes of gantry's programs (gantry, gantry-worker, gantry-coordinator): a
// contract for scripts. Every program uses these names; each lists the ones it can
// return in its --help.
#pragma once

namespace gantry {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,          // failed while running (a full disk, a lost peer, an internal error)
  kExitUsage = 2,            // bad flags, run file, configuration or data; a request found invalid
  kExitNotFound = 3,         // gantry: no such job (or group)
  kExitUnauthenticated = 4,  // gantry: missing or wrong token
  kExitUnavailable = 5,      // gantry: coordinator unreachable, or it did not answer in time
  kExitConflict = 6,         // gantry: the job's state forbids it (e.g. cancelling a finished job)
  kExitJobFailed = 7,        // gantry watch: the job ended FAILED
  kExitJobCancelled = 8,     // gantry watch: the job ended CANCELLED
};

// A process stopped by `signal` (SIGTERM, SIGINT) exits with 128 + signal, as shells do.
constexpr int ExitCodeForSignal(int signal) { return 128 + signal; }

}  // namespace gantry
