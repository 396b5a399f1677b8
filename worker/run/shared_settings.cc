#include "worker/run/shared_settings.h"

#include <string>

#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/comm/broadcast_string.h"

namespace gantry {

absl::StatusOr<SharedSettings> ShareSettings(Communicator& comm, const absl::StatusOr<RawSettings>& mine,
                                             const CommOptions& options) {
  std::string payload;
  if (comm.rank() == 0) {
    nlohmann::json j;
    if (mine.ok()) {
      j["settings"] = *mine;
    } else {
      j["error"] = std::string(mine.status().message());
    }
    payload = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // a message may quote bytes of a damaged file
  }
  RETURN_IF_ERROR(BroadcastString(comm, payload, 0, options));
  const nlohmann::json j = nlohmann::json::parse(payload);
  if (j.contains("error")) return absl::InvalidArgumentError(j["error"].get<std::string>());
  SharedSettings shared;
  shared.raw = j["settings"].get<RawSettings>();
  ASSIGN_OR_RETURN(shared.config, ResolveTrainConfig(shared.raw));
  return shared;
}

absl::StatusOr<bool> AllRanksOk(Communicator& comm, bool ok, const CommOptions& options) {
  float failures = ok ? 0.0f : 1.0f;
  RETURN_IF_ERROR(comm.AllReduceSum(&failures, 1, options));
  return failures == 0.0f;
}

}  // namespace gantry
