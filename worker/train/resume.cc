#include "worker/train/resume.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "worker/train/checkpoint_codec.h"

namespace gantry {
namespace {

// The most bytes a run.json may hold: gantry writes a few KB (settings, config, host);
// the bound keeps a damaged or hostile file from filling memory.
constexpr size_t kMaxRunJsonBytes = 1 << 20;

// RUN/run.json, parsed. It is read as a bounded regular file: a FIFO or device put in its
// place is refused at once instead of hanging --resume.
absl::StatusOr<nlohmann::json> ReadManifest(const std::string& run_dir) {
  const std::string path = run_dir + "/run.json";
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec)) {
    return absl::NotFoundError(absl::StrCat(run_dir, ": not a run folder (not a folder); give the --out folder of a run"));
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxRunJsonBytes);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(
        absl::StrCat(run_dir, ": not a run folder (no run.json); give the --out folder of a run"));
  }
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the run's settings: ", bytes.status().message(),
                     " (run.json is the small file gantry-worker train wrote in the run folder: restore it from a "
                     "copy, or start the run again)"));
  }
  try {
    return nlohmann::json::parse(bytes->begin(), bytes->end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid run.json: ", e.what()));
  }
}

// The "settings" object of run.json.
absl::StatusOr<RawSettings> RecordedSettings(const std::string& run_dir) {
  const std::string path = run_dir + "/run.json";
  ASSIGN_OR_RETURN(const nlohmann::json manifest, ReadManifest(run_dir));
  try {
    if (!manifest.contains("settings")) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": holds no \"settings\" (written by a gantry without ",
                                                     "checkpoints), so the run cannot be resumed"));
    }
    RawSettings settings = manifest["settings"].get<RawSettings>();
    // Pix2Pix runs recorded before --predict existed predicted the frame itself: a run
    // folder says what it trained, whatever today's default is.
    const auto model = settings.find("model");
    if (model != settings.end() && model->second == "pix2pix") settings.try_emplace("predict", "frame");
    return settings;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid run.json: ", e.what()));
  }
}

}  // namespace

const std::vector<std::string>& ResumeOverridableSettings() {
  static const auto* names = new std::vector<std::string>{"data-dir", "progress-seconds", "comm-timeout",
                                                          "checkpoint-every-steps", "keep-checkpoints",
                                                          "tensorboard", "watts-per-core", "quality"};
  return *names;
}

absl::StatusOr<RawSettings> ResumeSettings(const std::string& run_dir, const RawSettings& overrides) {
  ASSIGN_OR_RETURN(RawSettings settings, RecordedSettings(run_dir));
  const std::vector<std::string>& allowed = ResumeOverridableSettings();
  std::vector<std::string> refused;
  for (const auto& [name, value] : overrides) {
    const bool harmless = std::find(allowed.begin(), allowed.end(), name) != allowed.end();
    const auto recorded = settings.find(name);
    if (!harmless && (recorded == settings.end() || recorded->second != value)) {
      refused.push_back("--" + name);
      continue;
    }
    settings[name] = value;
  }
  if (!refused.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resume continues ", run_dir, " with the settings in its run.json; ", absl::StrJoin(refused, ", "),
        " would change them (allowed with --resume: --", absl::StrJoin(allowed, ", --"), ")"));
  }
  settings["out"] = run_dir;
  return settings;
}

absl::StatusOr<CheckpointExpectations> RecordedExpectations(const std::string& run_dir) {
  ASSIGN_OR_RETURN(const RawSettings settings, ResumeSettings(run_dir, {}));
  ASSIGN_OR_RETURN(const TrainConfig config, ResolveTrainConfig(settings));
  ASSIGN_OR_RETURN(const nlohmann::json manifest, ReadManifest(run_dir));
  const nlohmann::json* images = nullptr;
  if (manifest.contains("config") && manifest["config"].is_object() && manifest["config"].contains("train_images")) {
    images = &manifest["config"]["train_images"];
  }
  if (images == nullptr || !images->is_number_integer() || images->get<int64_t>() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(run_dir, "/run.json: holds no config.train_images, so its checkpoints cannot be matched"));
  }
  return ExpectationsFor(config, images->get<int64_t>());
}

absl::StatusOr<TrainingState> ShareNewestCheckpoint(Communicator& comm, const CheckpointStore* store,
                                                    const CheckpointExpectations& run, const CommOptions& options) {
  absl::StatusOr<LoadedCheckpoint> loaded = absl::UnknownError("not rank 0");
  std::string payload;          // the checkpoint file, or the error's message
  int64_t header[2] = {0, 0};   // status code (0: OK), payload bytes
  if (comm.rank() == 0) {
    CHECK(store != nullptr) << "rank 0 needs the checkpoint store";
    loaded = store->LoadNewestUsable(run);
    if (loaded.ok()) {
      for (const PassedOver& p : loaded->passed_over) spdlog::warn("checkpoint passed over: {}", p.fault);
      spdlog::info("resuming from {}", loaded->path);
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
  if (comm.rank() == 0) return std::move(loaded->state);
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  return DecodeCheckpoint(std::span<const uint8_t>(bytes, payload.size()), "the checkpoint sent by rank 0");
}

bool RunFinished(const TrainingState& state, const TrainConfig& config) {
  const SweepPosition& p = state.position;
  return p.batch_index + 1 == static_cast<int64_t>(config.batch_sizes.size()) &&
         (p.epoch > config.epochs || p.steps_left == 0);
}

}  // namespace gantry
