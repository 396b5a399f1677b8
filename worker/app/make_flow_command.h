// `gantry-worker make-flow`: generates flow-past-an-obstacle data with the lattice
// Boltzmann solver of worker/flow, one case folder per simulation (frames.npy,
// mask.npy, flow.json; see worker/flow/flow_writer.h). With --cases FILE the cases of
// the list go to DIR/case-NNN; under `mpirun -np N` rank r simulates cases r, r + N,
// ... and rank 0 prints a summary of all of them. Exit 2 for bad flags, a bad case file,
// a setting the solver refuses (with the reason and the fix) or an output folder that
// already holds files (a case is never written over); 1 when a case fails while running
// (e.g. the disk is full).
#pragma once

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/flow/flow_params.h"

namespace gantry {

class MakeFlowCommand {
 public:
  explicit MakeFlowCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  int Run(int* argc, char*** argv);

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  std::string out_;
  std::string cases_path_;
  double progress_seconds_ = 10;
  flow::FlowRequest request_;
};

}  // namespace gantry
