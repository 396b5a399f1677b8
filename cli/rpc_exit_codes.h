// How `gantry` turns a failed call into an exit code (common/exit_codes.h), and the list
// of its codes for `gantry --help`.
#pragma once

#include <grpcpp/support/status.h>

#include "common/exit_codes.h"

namespace gantry::cli {

// The exit code for a failed call.
ExitCode ExitCodeFor(grpc::StatusCode code);

// The codes `gantry` returns, as help text.
const char* ExitCodesHelp();

}  // namespace gantry::cli
