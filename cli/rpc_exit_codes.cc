#include "cli/rpc_exit_codes.h"

namespace gantry::cli {

ExitCode ExitCodeFor(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return kExitOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE: return kExitUsage;
    case grpc::StatusCode::NOT_FOUND: return kExitNotFound;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED: return kExitUnauthenticated;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED: return kExitUnavailable;
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::ALREADY_EXISTS: return kExitConflict;
    default: return kExitFailure;
  }
}

const char* ExitCodesHelp() {
  return "Exit codes: 0 ok; 1 other failure; 2 bad usage or invalid request; 3 job not found;\n"
         "4 unauthenticated (missing or wrong token); 5 coordinator unavailable or too slow;\n"
         "6 the job's state forbids it; 7 (watch) the job failed; 8 (watch) the job was cancelled.";
}

}  // namespace gantry::cli
