#include "coordinator/validation/spec_validator.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "runspec/batch_fit.h"
#include "runspec/datasets.h"
#include "runspec/generate_spec_check.h"
#include "runspec/rollout_spec_check.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

absl::Status FieldError(const std::string& field, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat("spec.", field, ": ", status.message()));
}

absl::Status CheckEachSetting(const SpecSettings& settings) {
  for (const auto& [setting, value] : settings) {
    const std::string field = FieldOfSetting(setting);
    if (value.size() > RequestBounds::kMaxStringChars) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.", field, ": longer than ", RequestBounds::kMaxStringChars, " characters"));
    }
    if (FindSettingInfo(setting) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.", field, ": this build's gantry-worker has no --", setting, " setting yet; leave the field unset"));
    }
    // The value alone first, so the error names this field; the combinations are
    // checked with every setting together (SpecValidator::Resolve).
    const absl::Status alone = CheckSettingValue(setting, value);
    if (!alone.ok()) return FieldError(field, alone);
  }
  return absl::OkStatus();
}

// A dataset is a folder of IDX files; a file there would only fail later, on a worker.
// Your own images (--dataset images) are a folder of images or one packed image set.
absl::Status CheckDataPlace(const std::string& field, const std::string& dataset, const std::string& resolved) {
  struct stat st {};
  if (::stat(resolved.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return absl::OkStatus();
  if (dataset == "images") {
    if (S_ISREG(st.st_mode)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", resolved, "' is neither a folder of images nor a ",
                                                   "file packed by gantry-worker make-dataset"));
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": '", resolved,
                                                 "' is a file, expected a folder (the one holding the dataset's "
                                                 "IDX files; give its folder, not one of its files)"));
}

// A flow case folder: it holds flow.json.
absl::Status CheckCaseFolder(const char* field, const std::string& case_dir) {
  struct stat st {};
  if (::stat((case_dir + "/flow.json").c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", case_dir,
                                                   "' holds no flow.json: give a case folder written by "
                                                   "`gantry-worker make-flow --out DIR`"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResolvedSpec> SpecValidator::Resolve(const v1::RunSpec& spec) const {
  if (spec.batch_sizes_size() > RequestBounds::kMaxBatchSizes) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.batch_sizes: at most ", RequestBounds::kMaxBatchSizes, " batch sizes per job"));
  }
  const SpecSettings settings = RunSpecToSettings(spec);
  RETURN_IF_ERROR(CheckEachSetting(settings));
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(RawSettings(settings.begin(), settings.end()));
  if (!config.ok()) return absl::InvalidArgumentError(absl::StrCat("spec: ", config.status().message()));
  if (absl::Status fits = CheckDatasetFitsModel(config->dataset, config->model, config->data_dir); !fits.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("spec: ", fits.message()));
  }

  const std::string field = spec.data_dir().empty()
                                ? absl::StrCat("spec.data_dir (unset: the ", config->dataset, " default location)")
                                : std::string("spec.data_dir");
  ASSIGN_OR_RETURN(std::string data_dir, roots_.Confine(field, EffectiveDataDir(*config)));
  RETURN_IF_ERROR(CheckDataPlace(field, config->dataset, data_dir));
  // Weights to start from are read by the pool's rank 0: inside the data roots too.
  for (const absl::string_view file : absl::StrSplit(config->init_from, ',', absl::SkipEmpty())) {
    RETURN_IF_ERROR(roots_.Confine("spec.init_from", std::string(file)).status());
  }
  ResolvedSpec resolved;
  resolved.batch_sizes = config->batch_sizes;
  resolved.epochs = config->epochs;
  resolved.seed = config->seed;
  resolved.rebalance = config->rebalance;
  resolved.straggler_window = config->straggler.window;
  resolved.data_dir = std::move(data_dir);
  resolved.needs_gpus = config->device == "cuda";
  resolved.min_share = MinShare(*config);
  return resolved;
}

absl::Status SpecValidator::CheckSubmissionFields(const v1::SubmitJobRequest& request) {
  if (request.world_size() < 0 || request.world_size() > RequestBounds::kMaxWorldSize) {
    return absl::InvalidArgumentError(absl::StrCat("world_size: ", request.world_size(), " is not in [0, ",
                                                   RequestBounds::kMaxWorldSize, "] (0: any group size)"));
  }
  if (request.max_attempts() < 0 || request.max_attempts() > RequestBounds::kMaxAttempts) {
    return absl::InvalidArgumentError(absl::StrCat("max_attempts: ", request.max_attempts(), " is not in [0, ",
                                                   RequestBounds::kMaxAttempts, "] (0: the default)"));
  }
  if (request.name().size() > RequestBounds::kMaxNameChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: longer than ", RequestBounds::kMaxNameChars, " characters"));
  }
  // Shown in `gantry jobs` on other people's terminals: a newline or an escape sequence
  // in it would rewrite their screen.
  return CheckPrintableField("name", request.name(), "a job name");
}

absl::StatusOr<ResolvedSpec> SpecValidator::CheckSubmit(const v1::SubmitJobRequest& request) const {
  RETURN_IF_ERROR(CheckSubmissionFields(request));
  if (!allow_debug_settings_) {
    for (const auto& [setting, value] : RunSpecToSettings(request.spec())) {
      if (!IsDebugSetting(setting)) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("spec.", FieldOfSetting(setting), ": debug switches are refused by this coordinator (they ",
                       "stall or poison a whole pool); leave the field unset, or start gantry-coordinator with ",
                       "--allow-debug-settings"));
    }
  }
  ASSIGN_OR_RETURN(ResolvedSpec resolved, Resolve(request.spec()));
  if (request.world_size() > 0) {
    const absl::StatusOr<TrainConfig> config = ResolveTrainConfig(RunSpecToSettings(request.spec()));
    for (int64_t batch : resolved.batch_sizes) {
      if (absl::Status fits = CheckBatchFitsRanks(*config, batch, request.world_size()); !fits.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("spec.batch_sizes: ", fits.message()));
      }
    }
  }
  return resolved;
}

absl::StatusOr<ResolvedSpec> SpecValidator::ResolveRollout(const v1::RolloutSpec& rollout) const {
  RETURN_IF_ERROR(CheckRolloutSpec(rollout));
  if (rollout.source_job_id().size() > RequestBounds::kMaxNameChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("rollout.source_job_id: longer than ", RequestBounds::kMaxNameChars, " characters"));
  }
  if (rollout.case_dir().size() > RequestBounds::kMaxStringChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("rollout.case_dir: longer than ", RequestBounds::kMaxStringChars, " characters"));
  }
  ASSIGN_OR_RETURN(std::string case_dir, roots_.Confine("rollout.case_dir", rollout.case_dir()));
  RETURN_IF_ERROR(CheckCaseFolder("rollout.case_dir", case_dir));
  ResolvedSpec resolved;
  resolved.rollout = true;
  resolved.data_dir = std::move(case_dir);
  return resolved;
}

absl::StatusOr<ResolvedSpec> SpecValidator::CheckRolloutSubmit(const v1::SubmitJobRequest& request) const {
  RETURN_IF_ERROR(CheckSubmissionFields(request));
  if (request.has_spec()) {
    return absl::InvalidArgumentError(
        "spec: leave it unset with rollout: a rollout takes the spec of the run it rolls out");
  }
  return ResolveRollout(request.rollout());
}

absl::StatusOr<ResolvedSpec> SpecValidator::ResolveGenerate(const v1::GenerateSpec& generate) const {
  RETURN_IF_ERROR(CheckGenerateSpec(generate));
  if (generate.source_job_id().size() > RequestBounds::kMaxNameChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("generate.source_job_id: longer than ", RequestBounds::kMaxNameChars, " characters"));
  }
  ResolvedSpec resolved;
  resolved.generate = true;
  if (generate.case_dir().empty()) return resolved;
  if (generate.case_dir().size() > RequestBounds::kMaxStringChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("generate.case_dir: longer than ", RequestBounds::kMaxStringChars, " characters"));
  }
  ASSIGN_OR_RETURN(resolved.data_dir, roots_.Confine("generate.case_dir", generate.case_dir()));
  RETURN_IF_ERROR(CheckCaseFolder("generate.case_dir", resolved.data_dir));
  return resolved;
}

absl::StatusOr<ResolvedSpec> SpecValidator::CheckGenerateSubmit(const v1::SubmitJobRequest& request) const {
  RETURN_IF_ERROR(CheckSubmissionFields(request));
  if (request.has_spec() || request.has_rollout()) {
    return absl::InvalidArgumentError(
        "spec, rollout: leave them unset with generate: it takes the spec of the run it samples");
  }
  return ResolveGenerate(request.generate());
}

}  // namespace gantry
