#include "worker/pool/pool_collectives.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "common/host_name.h"
#include "common/status_macros.h"
#include "worker/comm/gather_strings.h"

namespace gantry {

absl::StatusOr<PoolCommand> ShareCommand(Communicator& comm, const PoolCommand& mine, bool stopping,
                                         const CommOptions& opts) {
  float stops = stopping ? 1.0f : 0.0f;
  RETURN_IF_ERROR(comm.AllReduceSum(&stops, 1, opts));
  std::string payload;
  std::array<int64_t, 3> header{mine.kind, 0, mine.exit_code};
  if (comm.rank() == 0 && mine.kind == PoolCommand::kRunJob) {
    payload = mine.job.SerializeAsString();
    header[1] = static_cast<int64_t>(payload.size());
  }
  RETURN_IF_ERROR(comm.Broadcast(header.data(), sizeof(header), 0, opts));
  PoolCommand command;
  command.kind = static_cast<PoolCommand::Kind>(header[0]);
  command.exit_code = header[2];
  if (header[1] > 0) {
    payload.resize(static_cast<size_t>(header[1]));
    RETURN_IF_ERROR(comm.Broadcast(payload.data(), header[1], 0, opts));
    if (!command.job.ParseFromString(payload)) {
      return absl::InternalError(absl::StrCat("rank ", comm.rank(), ": the job rank 0 sent does not parse"));
    }
  }
  if (stops > 0) {
    command.kind = PoolCommand::kStop;
    command.signalled = true;
  }
  return command;
}

absl::StatusOr<std::vector<std::string>> GatherHostNames(Communicator& comm, const CommOptions& opts) {
  return GatherStrings(comm, ThisHostName(), 0, opts);
}

}  // namespace gantry
