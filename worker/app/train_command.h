// `gantry-worker train`: trains a model and writes its run folder.
//
//   gantry-worker train --dataset mnist --data-dir DIR --epochs 3 --batch-size 64 --out RUN
//   gantry-worker train --config run.yaml [--flag value ...]   (flags override the file)
//   gantry-worker train --resume RUN                            (continue from RUN's newest checkpoint)
//   mpirun -np 2 gantry-worker train ...                        (synchronous data parallel)
//
// Under mpirun, rank 0's flags are the run's: rank 0 validates them and broadcasts them,
// so no rank can run with a different setting. Rank 0 writes the run folder.
//
// Exit codes (common/exit_codes.h): 0 trained, or --resume found the run already
// finished; 2 bad flags, run file, configuration, data, or nothing to resume from; 1
// failed while running (under mpirun the whole job is aborted, so mpirun exits non-zero).
#pragma once

#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "runspec/train_config.h"

namespace gantry {

class TrainCommand {
 public:
  // Adds the `train` subcommand, with one flag per setting (runspec/train_config.h), to `app`.
  explicit TrainCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  // Trains; returns the process's exit code (or ends every rank on a failure mid-run).
  int Run(int* argc, char*** argv);

 private:
  // Rank 0's settings: the flags given, over the run file or the resumed run's run.json.
  absl::StatusOr<RawSettings> GivenSettings() const;

  CLI::App* command_;
  std::string config_path_;
  std::string resume_dir_;
  CLI::Option* config_option_ = nullptr;
  CLI::Option* resume_option_ = nullptr;
  std::map<std::string, std::string> values_;
  std::map<std::string, CLI::Option*> options_;
};

}  // namespace gantry
