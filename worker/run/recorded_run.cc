#include "worker/run/recorded_run.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace gantry {
namespace {

// RUN/run.json, parsed.
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

// The "settings" object of run.json, with the defaults of older versions filled in.
absl::StatusOr<RawSettings> SettingsOf(const nlohmann::json& manifest, const std::string& path) {
  if (!manifest.is_object() || !manifest.contains("settings")) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": holds no \"settings\" (written by a gantry without ",
                                                   "checkpoints), so the run cannot be resumed or used"));
  }
  try {
    RawSettings settings = manifest["settings"].get<RawSettings>();
    // Pix2Pix runs recorded before --predict existed predicted the frame itself.
    const auto model = settings.find("model");
    if (model != settings.end() && model->second == "pix2pix") settings.try_emplace("predict", "frame");
    return settings;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid run.json: ", e.what()));
  }
}

// config.train_images, or 0 when absent or not a positive integer.
int64_t TrainImagesOf(const nlohmann::json& manifest) {
  if (!manifest.contains("config") || !manifest["config"].is_object()) return 0;
  const nlohmann::json& config = manifest["config"];
  if (!config.contains("train_images") || !config["train_images"].is_number_integer()) return 0;
  const int64_t images = config["train_images"].get<int64_t>();
  return images > 0 ? images : 0;
}

}  // namespace

absl::StatusOr<RecordedRun> ReadRecordedRun(const std::string& run_dir) {
  ASSIGN_OR_RETURN(const nlohmann::json manifest, ReadManifest(run_dir));
  RecordedRun run{.run_dir = run_dir};
  ASSIGN_OR_RETURN(run.settings, SettingsOf(manifest, run_dir + "/run.json"));
  run.train_images = TrainImagesOf(manifest);
  return run;
}

absl::StatusOr<CheckpointExpectations> ExpectationsOf(const RecordedRun& run) {
  ASSIGN_OR_RETURN(const TrainConfig config, ResolveTrainConfig(run.settings));
  if (run.train_images < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(run.run_dir, "/run.json: holds no config.train_images, so its checkpoints cannot be matched"));
  }
  return ExpectationsFor(config, run.train_images);
}

}  // namespace gantry
