// `gantry report ID [--csv]`: the per-batch-size timing table of a job (timing.md), or
// its rows as epochs.csv, or (--json) as JSON (cli/report_format.h).
#pragma once

#include <string>

#include "cli/command.h"

namespace gantry::cli {

class ReportCommand : public Command {
 public:
  explicit ReportCommand(CLI::App& app);
  int Run(Connection& client) override;

 private:
  std::string job_id_;
  bool csv_ = false;
};

}  // namespace gantry::cli
