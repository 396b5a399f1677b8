// `gantry-worker generate --run RUN --count K --out DIR [--checkpoint N] [--seed S]
// [--noise-file F.npy] [--interpolate A,B --steps S] [--precision fp32|bf16]`, and for a
// next-frame model `--condition F.npy` or `--case DIR [--frame T]`: samples from a
// trained run's generator, spread over the ranks of `mpirun -np N`
// (worker/generate/generate_job.h).
#pragma once

#include <memory>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/generate/generate_job.h"

namespace gantry {

class GenerateCommand {
 public:
  explicit GenerateCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  // Exit codes: 0 written; 2 a bad request or input (every rank agrees before anything
  // runs); 1 a failure while generating or writing (every rank ends).
  int Run(int* argc, char*** argv);

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  GenerateRequest request_;
  int64_t count_ = kNotGiven;
};

}  // namespace gantry
