#include "worker/run/resume.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "runspec/resume_rules.h"
#include "spdlog/spdlog.h"
#include "worker/run/recorded_run.h"
#include "worker/run/run_manifest.h"

namespace gantry {
namespace {

// "--lr 0.1 (the run's: 0.0001)".
std::string DescribeChange(const SettingChange& c) {
  return absl::StrCat("--", c.name, " ", c.after, " (the run's: ", c.before, ")");
}

}  // namespace

const std::vector<std::string>& ResumeOverridableSettings() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>(FreeOnResumeSettings());
    for (const std::string& name : ExtendableOnResumeSettings()) v->push_back(name);
    return v;
  }();
  return *names;
}

absl::StatusOr<RawSettings> ResumeSettings(const std::string& run_dir, const RawSettings& overrides) {
  ASSIGN_OR_RETURN(RecordedRun recorded, ReadRecordedRun(run_dir));
  RawSettings& settings = recorded.settings;
  // The free settings as given; the others only where they resolve to another value.
  RawSettings wanted = settings;
  for (const auto& [name, value] : overrides) {
    if (ResumeRuleOf(name) == ResumeRule::kFree) {
      settings[name] = value;
    } else {
      wanted[name] = value;
    }
  }
  std::vector<std::string> refused;
  for (const SettingChange& change : ChangedSettings(settings, wanted)) {
    const bool more_epochs = change.rule == ResumeRule::kExtendable && EpochsOf(wanted) > EpochsOf(settings);
    if (more_epochs) {
      settings[change.name] = wanted[change.name];
    } else {
      refused.push_back(DescribeChange(change));
    }
  }
  if (!refused.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resume continues ", run_dir, " with the settings in its run.json; ", absl::StrJoin(refused, ", "),
        " would change them (allowed with --resume: --", absl::StrJoin(FreeOnResumeSettings(), ", --"),
        ", and more --epochs; start a new run to train otherwise)"));
  }
  settings["out"] = run_dir;
  return settings;
}

absl::StatusOr<std::vector<SettingChange>> CheckSettingsRecord(const RawSettings& record, const RawSettings& in_use,
                                                               const std::string& checkpoint) {
  std::vector<SettingChange> grown;
  std::vector<std::string> refused;
  for (const SettingChange& change : ChangedSettings(record, in_use)) {
    if (change.rule == ResumeRule::kExtendable && EpochsOf(in_use) > EpochsOf(record)) {
      grown.push_back(change);
    } else {
      refused.push_back(absl::StrCat("--", change.name, " is ", change.after, " in run.json or on the command line, ",
                                     change.before, " in the checkpoint"));
    }
  }
  if (!refused.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        checkpoint, ": the run trained with other settings than it would resume with: ", absl::StrJoin(refused, "; "),
        " (the checkpoint records what the run trained with; run.json was edited or the flag changes it: put back "
        "the checkpoint's values, or start a new run)"));
  }
  return grown;
}

absl::Status RecordResumeChanges(const std::string& run_dir, const std::vector<SettingChange>& changes) {
  if (changes.empty()) return absl::OkStatus();
  const std::string path = run_dir + "/run.json";
  ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(path, kMaxRunJsonBytes));
  nlohmann::ordered_json manifest;
  try {
    manifest = nlohmann::ordered_json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid run.json: ", e.what()));
  }
  for (const SettingChange& c : changes) {
    const std::string now = c.after.starts_with("not given") ? "" : c.after;
    spdlog::info("resume changes --{}: {} -> {} (recorded in run.json's resume_changes)", c.name, c.before, c.after);
    if (now.empty()) {
      manifest["settings"].erase(c.name);
    } else {
      manifest["settings"][c.name] = now;
    }
    if (c.name == "epochs" && manifest.contains("config") && manifest["config"].is_object()) {
      manifest["config"]["epochs"] = EpochsOf(manifest["settings"].get<RawSettings>());
    }
    manifest["resume_changes"].push_back({{"utc", UtcNow()}, {"setting", c.name}, {"from", c.before}, {"to", c.after}});
  }
  return WriteFileAtomically(path, manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
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
