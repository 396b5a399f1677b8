#include "worker/app/inspect_command.h"

#include <cstdio>

#include "common/exit_codes.h"
#include "worker/run/checkpoint_summary.h"

namespace gantry {

InspectCommand::InspectCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "inspect-checkpoint", "check a checkpoint (as --resume would) and print what it holds, as JSON; exit 2 if damaged");
  command_->add_option("PATH", path_,
                        "a checkpoint file, or a run folder: its newest usable checkpoint, as --resume chooses it, "
                        "with the newer files passed over (\"skipped\")")->required();
}

int InspectCommand::Run() {
  const absl::StatusOr<std::string> summary = CheckpointSummaryJson(path_);
  if (!summary.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(summary.status().message()).c_str());
    return kExitUsage;
  }
  std::fputs(summary->c_str(), stdout);
  return kExitOk;
}

}  // namespace gantry
