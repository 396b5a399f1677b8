// `gantry cancel ID`: cancels a job; a queued one ends at once, a running one stops at
// its group's next report (the job is CANCELLING until then).
#pragma once

#include <string>

#include "cli/command.h"

namespace gantry::cli {

class CancelCommand : public Command {
 public:
  explicit CancelCommand(CLI::App& app);
  int Run(Connection& client) override;

 private:
  std::string job_id_;
};

}  // namespace gantry::cli
