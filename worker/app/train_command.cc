#include "worker/app/train_command.h"

#include <cstdio>

#include "absl/strings/str_join.h"
#include "common/exit_codes.h"
#include "report/epoch_table.h"
#include "runspec/run_file.h"
#include "spdlog/spdlog.h"
#include "worker/app/logging.h"
#include "worker/app/process_group.h"
#include "worker/run/resume.h"
#include "worker/train/train_job.h"

namespace gantry {
namespace {

// The job's end as an exit code; a failure mid-run ends every rank (the others may be
// waiting in a collective for this one).
int ExitCodeOf(const TrainJobResult& r, ProcessGroup& group) {
  const bool root = group.comm().rank() == 0;
  const std::string message(r.status.message());
  switch (r.end) {
    case TrainJobEnd::kRefused:
      // ABORTED: another rank's refusal, which that rank reports.
      if (root || !absl::IsAborted(r.status)) spdlog::error("{}", message);
      return kExitUsage;
    case TrainJobEnd::kFailed:
      spdlog::error("{}", message);
      group.Exit(absl::IsInvalidArgument(r.status) ? kExitUsage : kExitFailure);
    case TrainJobEnd::kTrained:
    case TrainJobEnd::kAlreadyFinished:
      break;
  }
  return kExitOk;
}

void PrintSummary(const TrainJobResult& r) {
  std::printf("\n%s\n%s\n", FormatEpochTable(r.rows).c_str(), r.timing_markdown.c_str());
  spdlog::info("run folder: {} (epochs.csv, timing.md, samples/, checkpoints/, run.json, log.txt)", r.config.out);
  spdlog::info("timing table: {}/timing.md", r.config.out);
  spdlog::info("samples: {}/samples", r.config.out);
}

}  // namespace

TrainCommand::TrainCommand(CLI::App& app) {
  command_ = app.add_subcommand("train", "train a model and write its run folder");
  // Not checked for existence here: only rank 0 reads it (other hosts may lack it), and
  // ReadRunFile reports a missing file by name.
  config_option_ = command_->add_option("--config", config_path_, "YAML or JSON run file of setting: value pairs");
  resume_option_ = command_
      ->add_option("--resume", resume_dir_,
                   "continue the run in folder RUN from its newest usable checkpoint, with the settings in "
                   "RUN/run.json (only --" + absl::StrJoin(ResumeOverridableSettings(), ", --") +
                       " may be given with it); a finished run is reported and left as it is")
      ->option_text("RUN");
  for (const SettingInfo& s : TrainSettings()) {
    std::string help = s.help;
    if (!s.default_value.empty()) help += " [default: " + s.default_value + "]";
    if (!s.range.empty()) help += " [" + s.range + "]";
    options_[s.name] = s.is_flag ? command_->add_flag("--" + s.name + "{true}", values_[s.name], help)
                                 : command_->add_option("--" + s.name, values_[s.name], help);
  }
}

absl::StatusOr<RawSettings> TrainCommand::GivenSettings() const {
  RawSettings given;
  for (const auto& [name, option] : options_) {
    if (option->count() > 0) given[name] = values_.at(name);
  }
  absl::StatusOr<RawSettings> settings = given;
  // Given but empty ('') is a mistake to say, not "not given": it would start a default run.
  if (config_option_->count() > 0 && config_path_.empty()) {
    return absl::InvalidArgumentError("--config '': give the path of a YAML or JSON run file");
  }
  if (resume_option_->count() > 0 && resume_dir_.empty()) {
    return absl::InvalidArgumentError("--resume '': give the folder of the run to continue (its --out)");
  }
  if (!resume_dir_.empty()) {
    if (!config_path_.empty()) {
      return absl::InvalidArgumentError(
          "--config cannot be combined with --resume: the run's settings come from RUN/run.json");
    }
    settings = ResumeSettings(resume_dir_, given);
  } else if (!config_path_.empty()) {
    settings = ReadRunFile(config_path_);
    if (settings.ok()) {
      for (const auto& [name, value] : given) (*settings)[name] = value;
    }
  }
  if (!settings.ok()) return settings;
  if (absl::StatusOr<TrainConfig> checked = ResolveTrainConfig(*settings); !checked.ok()) return checked.status();
  return settings;
}

int TrainCommand::Run(int* argc, char*** argv) {
  // Every rank parses its own command line (so --help works anywhere), but only rank 0's
  // result is used; RunTrainJob hands it to the others.
  TrainJobRequest request;
  request.settings = GivenSettings();
  request.resume = !resume_dir_.empty();
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  const TrainJobResult result = RunTrainJob(group->comm(), request, SetUpRunLogging);
  const int code = ExitCodeOf(result, *group);
  if (code == kExitOk && group->comm().rank() == 0) PrintSummary(result);
  return code;
}

}  // namespace gantry
