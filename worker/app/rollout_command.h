// `gantry-worker rollout --run RUN --case DIR --steps H [--tile S --overlap O]
// [--blend gaussian|linear|none]`: rolls a trained next-frame model out over a flow case,
// its tiles spread over the ranks of `mpirun -np N` (worker/rollout/rollout_job.h).
#pragma once

#include <memory>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/rollout/rollout_job.h"

namespace gantry {

class RolloutCommand {
 public:
  explicit RolloutCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  // Exit codes: 0 written; 2 a bad request or input (every rank agrees before anything
  // runs); 1 a failure while rolling out (every rank ends).
  int Run(int* argc, char*** argv);

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  RolloutRequest request_;
};

}  // namespace gantry
