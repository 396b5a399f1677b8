// `gantry-worker serve`: the worker pool mode.
//
//   mpirun -np N gantry-worker serve --coordinator HOST:PORT [--token TOKEN|FILE]
//       [--tls-ca CA.pem] [--runs-dir runs] [--name NAME] [--max-jobs N] ...
//
// Joins the ranks (MPI under mpirun, else a group of one), connects rank 0 to the
// coordinator and runs the ServeLoop (worker/pool/serve_loop.h) until it is stopped;
// when the loop reports the ranks out of step, ends every rank of the job.
// --coordinator and --token fall back to GANTRY_COORDINATOR and GANTRY_TOKEN.
#pragma once

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/pool/serve_loop.h"

namespace gantry {

class ServeCommand {
 public:
  // Adds the `serve` subcommand and its flags to `app`.
  explicit ServeCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  // Runs the pool; returns the process's exit code.
  int Run(int* argc, char*** argv);

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  ServeOptions options_;
};

}  // namespace gantry
