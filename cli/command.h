// A `gantry` subcommand: its constructor adds the subcommand and its flags to the app;
// once the command line is parsed and the coordinator's connection set up, the selected
// one runs and returns the process's exit code (cli/rpc_exit_codes.h). Each prints its
// result as a table, or as JSON with --json (cli/output.h).
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "cli/connection.h"

namespace gantry::cli {

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  bool selected() const { return command_->parsed(); }
  virtual int Run(Connection& client) = 0;

 protected:
  // Adds the subcommand `name` to `app`; the derived class adds its flags to command_.
  Command(CLI::App& app, const std::string& name, const std::string& description)
      : command_(app.add_subcommand(name, description)) {}

  CLI::App* command_;
};

}  // namespace gantry::cli
