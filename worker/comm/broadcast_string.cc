#include "worker/comm/broadcast_string.h"

#include <cstdint>

#include "common/status_macros.h"

namespace gantry {

absl::Status BroadcastString(Communicator& comm, std::string& text, int root, const CommOptions& options) {
  int64_t size = static_cast<int64_t>(text.size());
  RETURN_IF_ERROR(comm.Broadcast(&size, sizeof(size), root, options));
  text.resize(static_cast<size_t>(size));
  if (size == 0) return absl::OkStatus();
  return comm.Broadcast(text.data(), size, root, options);
}

}  // namespace gantry
