#include "cli/submit_command.h"

#include <cstdio>
#include <map>

#include "cli/output.h"
#include "cli/rpc_exit_codes.h"
#include "cli/watch_command.h"
#include "report/state_names.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"

namespace gantry::cli {

int SubmitAndShow(Connection& client, const v1::SubmitJobRequest& request, bool watch) {
  v1::Job job;
  grpc::Status status = client.Call(&v1::Coordinator::Stub::SubmitJob, request, &job);
  if (!status.ok()) return FailCall(client, status);
  if (client.flags().json) {
    std::printf("%s\n", ToJson(job).c_str());
  } else {
    std::printf("submitted %s (%s)\n", Shown(job.id()).c_str(), JobStateName(job.state()).c_str());
  }
  std::fflush(stdout);
  if (!watch) return kExitOk;
  WatchArgs watch_args;
  watch_args.job_id = job.id();
  return Watch(client, watch_args);
}

SubmitCommand::SubmitCommand(CLI::App& app) : Command(app, "submit", "queue a training run; prints its job id") {
  command_->add_option("run_file", args_.run_file,
                       "YAML or JSON run file (setting: value), as gantry-worker's --config");
  command_->add_option("--world-size", args_.world_size, "ranks the run needs (0: any group that fits)")
      ->default_val(0);
  command_->add_option("--max-attempts", args_.max_attempts, "times it may be handed to a group (0: coordinator's)")
      ->default_val(0);
  command_->add_option("--name", args_.name, "a label shown in `gantry jobs`");
  command_->add_flag("--watch", args_.watch, "then watch it to the end (exit code as `gantry watch`)");
  AddRunSettingFlags();
}

void SubmitCommand::AddRunSettingFlags() {
  for (const std::string& name : RunSpecSettingNames()) {
    const SettingInfo* info = FindSettingInfo(name);
    std::string help = info != nullptr ? info->help : "see proto/gantry/v1/run_spec.proto (not in this build's worker)";
    if (info != nullptr && !info->default_value.empty()) help += " [worker default: " + info->default_value + "]";
    const bool is_switch = info != nullptr && info->is_flag;
    CLI::Option* option = is_switch ? command_->add_flag("--" + name + "{true}", args_.settings[name], help)
                                    : command_->add_option("--" + name, args_.settings[name], help);
    option->group("Run settings (as gantry-worker train)");
    setting_options_[name] = option;
  }
}

SubmitArgs SubmitCommand::Args() const {
  SubmitArgs args = args_;
  // Only the settings given on the command line override the run file's.
  std::erase_if(args.settings,
                [this](const auto& setting) { return setting_options_.at(setting.first)->count() == 0; });
  return args;
}

int SubmitCommand::Run(Connection& client) {
  const SubmitArgs args = Args();
  absl::StatusOr<v1::SubmitJobRequest> request = BuildSubmitRequest(args);
  // A run file or flag that is wrong here is bad usage (2), whatever errno said: not
  // "job not found" (3) for a missing file, nor "unauthenticated" (4) for an unreadable one.
  if (!request.ok()) return Fail(absl::InvalidArgumentError(request.status().message()), client.flags().json);
  return SubmitAndShow(client, *request, args.watch);
}

}  // namespace gantry::cli
