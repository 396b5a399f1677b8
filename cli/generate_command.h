// `gantry generate JOB_ID [--count K] [--seed S] [--name N] [--interpolate A,B --steps S]
// [--case DIR --frame T] ...`: queues samples from a finished run's generator (as
// gantry-worker generate, into RUN/generate-<name>/ of that run, never over an earlier
// one) and prints its job id; options left out keep gantry-worker generate's defaults.
// --watch as for `gantry submit`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "cli/command.h"
#include "cli/submit_request.h"

namespace gantry::cli {

class GenerateCommand : public Command {
 public:
  explicit GenerateCommand(CLI::App& app);
  int Run(Connection& client) override;
  // What the parsed command line asks for: the options given, the others unset.
  GenerateArgs Args() const;

 private:
  GenerateArgs args_;
  std::map<std::string, std::string> numbers_;  // as typed; checked by the options' validators
  std::map<std::string, CLI::Option*> number_options_;
  std::string seed_;
  CLI::Option* seed_option_ = nullptr;
};

}  // namespace gantry::cli
