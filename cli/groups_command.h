// `gantry groups`: the registered worker groups, as a table or, with --json, the
// ListGroups response.
#pragma once

#include "cli/command.h"

namespace gantry::cli {

class GroupsCommand : public Command {
 public:
  explicit GroupsCommand(CLI::App& app) : Command(app, "groups", "list registered worker groups") {}
  int Run(Connection& client) override;
};

}  // namespace gantry::cli
