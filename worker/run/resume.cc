#include "worker/run/resume.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "worker/run/recorded_run.h"

namespace gantry {

const std::vector<std::string>& ResumeOverridableSettings() {
  static const auto* names = new std::vector<std::string>{"data-dir", "progress-seconds", "comm-timeout",
                                                          "checkpoint-every-steps", "keep-checkpoints",
                                                          "tensorboard", "watts-per-core", "quality"};
  return *names;
}

absl::StatusOr<RawSettings> ResumeSettings(const std::string& run_dir, const RawSettings& overrides) {
  ASSIGN_OR_RETURN(RecordedRun recorded, ReadRecordedRun(run_dir));
  RawSettings& settings = recorded.settings;
  const std::vector<std::string>& allowed = ResumeOverridableSettings();
  std::vector<std::string> refused;
  for (const auto& [name, value] : overrides) {
    const bool harmless = std::find(allowed.begin(), allowed.end(), name) != allowed.end();
    const auto it = settings.find(name);
    if (!harmless && (it == settings.end() || it->second != value)) {
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
  ASSIGN_OR_RETURN(const RecordedRun recorded, ReadRecordedRun(run_dir));
  return ExpectationsOf(recorded);
}

bool RunFinished(const TrainingState& state, const TrainConfig& config) {
  const SweepPosition& p = state.position;
  return p.batch_index + 1 == static_cast<int64_t>(config.batch_sizes.size()) &&
         (p.epoch > config.epochs || p.steps_left == 0);
}

}  // namespace gantry
