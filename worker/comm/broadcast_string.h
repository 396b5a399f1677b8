// A variable-length string from one rank to all: its length, then its bytes.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"

namespace gantry {

// Replaces `text` on every rank but `root` with root's `text`. The collective's error
// (the same length broadcast bounds every wait by `options`) on failure.
absl::Status BroadcastString(Communicator& comm, std::string& text, int root, const CommOptions& options);

}  // namespace gantry
