// `gantry-worker inspect-checkpoint RUN|FILE`: checks a checkpoint as --resume would and
// prints what it holds as JSON; exit 2 when it is damaged or foreign.
#pragma once

#include <string>

#include "CLI/CLI.hpp"

namespace gantry {

class InspectCommand {
 public:
  explicit InspectCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  int Run();

 private:
  CLI::App* command_;
  std::string path_;
};

}  // namespace gantry
