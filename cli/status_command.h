// `gantry status ID`: one job, as `key value` lines or, with --json, the Job message.
#pragma once

#include <string>

#include "cli/command.h"

namespace gantry::cli {

class StatusCommand : public Command {
 public:
  explicit StatusCommand(CLI::App& app);
  int Run(Connection& client) override;

 private:
  std::string job_id_;
};

}  // namespace gantry::cli
