// `gantry submit [RUN_FILE] [--SETTING VALUE ...] [--world-size N] [--max-attempts N]
// [--name NAME] [--watch]`: queues a training run and prints its job id. The settings
// are gantry-worker train's flags (runspec/), over the run file's; with --watch it then
// follows the job as `gantry watch` does, with that exit code. A run file or setting
// that is wrong is bad usage (exit 2).
#pragma once

#include <map>
#include <string>

#include "cli/command.h"
#include "cli/submit_request.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry::cli {

// Sends a submission (a run's or a rollout's), prints the job (and with `watch`,
// follows it to its end).
int SubmitAndShow(Connection& client, const v1::SubmitJobRequest& request, bool watch);

class SubmitCommand : public Command {
 public:
  explicit SubmitCommand(CLI::App& app);
  int Run(Connection& client) override;
  // What the parsed command line asks for: the run file and the settings given as flags.
  SubmitArgs Args() const;

 private:
  // One flag per run setting, in the group "Run settings (as gantry-worker train)".
  void AddRunSettingFlags();

  SubmitArgs args_;
  std::map<std::string, CLI::Option*> setting_options_;  // by setting name
};

}  // namespace gantry::cli
