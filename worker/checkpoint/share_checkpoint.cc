#include "worker/checkpoint/share_checkpoint.h"

#include <span>

#include "common/check.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/checkpoint/checkpoint_codec.h"

namespace gantry {
namespace {

// Rank 0: the checkpoint asked for, its passed-over newer files logged.
absl::StatusOr<LoadedCheckpoint> LoadOnRoot(const CheckpointStore& store, const CheckpointExpectations& run,
                                            int64_t step) {
  absl::StatusOr<LoadedCheckpoint> loaded = step > 0 ? store.LoadAtStep(step, run) : store.LoadNewestUsable(run);
  if (!loaded.ok()) return loaded;
  for (const PassedOver& p : loaded->passed_over) spdlog::warn("checkpoint passed over: {}", p.fault);
  return loaded;
}

}  // namespace

absl::StatusOr<SharedCheckpoint> ShareCheckpoint(Communicator& comm, const CheckpointStore* store,
                                                 const CheckpointExpectations& run, int64_t step,
                                                 const CommOptions& options) {
  absl::StatusOr<LoadedCheckpoint> loaded = absl::UnknownError("not rank 0");
  std::string payload;         // the checkpoint file, or the error's message
  int64_t header[2] = {0, 0};  // status code (0: OK), payload bytes
  if (comm.rank() == 0) {
    CHECK(store != nullptr) << "rank 0 needs the checkpoint store";
    loaded = LoadOnRoot(*store, run, step);
    if (loaded.ok()) {
      payload.assign(loaded->bytes.begin(), loaded->bytes.end());
    } else {
      header[0] = static_cast<int64_t>(loaded.status().code());
      payload = std::string(loaded.status().message());
    }
    header[1] = static_cast<int64_t>(payload.size());
  }
  RETURN_IF_ERROR(comm.Broadcast(header, sizeof(header), 0, options));
  payload.resize(static_cast<size_t>(header[1]));
  RETURN_IF_ERROR(comm.Broadcast(payload.data(), header[1], 0, options));
  if (header[0] != 0) return absl::Status(static_cast<absl::StatusCode>(header[0]), payload);
  if (comm.rank() == 0) return SharedCheckpoint{std::move(loaded->state), loaded->path};
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  ASSIGN_OR_RETURN(TrainingState state,
                   DecodeCheckpoint(std::span<const uint8_t>(bytes, payload.size()), "the checkpoint sent by rank 0"));
  return SharedCheckpoint{std::move(state), ""};
}

}  // namespace gantry
