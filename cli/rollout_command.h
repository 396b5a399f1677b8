// `gantry rollout JOB_ID --case DIR --steps H [--tile S --overlap O --blend B ...]`:
// queues a rollout of a finished pix2pix flow run over a flow case (as gantry-worker
// rollout, into RUN/rollout-<case>-<job id>/ of that run) and prints its job id; options left
// out keep gantry-worker rollout's defaults. --watch as for `gantry submit`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "cli/command.h"
#include "cli/submit_request.h"

namespace gantry::cli {

class RolloutCommand : public Command {
 public:
  explicit RolloutCommand(CLI::App& app);
  int Run(Connection& client) override;
  // What the parsed command line asks for: the options given, the others unset.
  RolloutArgs Args() const;

 private:
  RolloutArgs args_;
  // The optional whole-number options, by flag name: their values, and whether given.
  std::map<std::string, int64_t> numbers_;
  std::map<std::string, CLI::Option*> number_options_;
};

}  // namespace gantry::cli
