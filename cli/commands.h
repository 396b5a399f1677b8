// The `gantry` subcommands. Each prints its result (a table, or JSON with --json) and
// returns the exit code (cli/exit_codes.h).
#pragma once

#include <map>
#include <string>

#include "cli/client.h"

namespace gantry::cli {

struct SubmitArgs {
  std::string run_file;                          // YAML/JSON of setting: value pairs; may be empty
  std::map<std::string, std::string> settings;   // from flags; override the run file
  int world_size = 0;
  int max_attempts = 0;
  std::string name;
  bool watch = false;
};

struct WatchArgs {
  std::string job_id;
  double timeout_seconds = 86400;     // the whole watch
  double reconnect_seconds = 60;      // how long to retry a lost coordinator
};

int Submit(Client& client, const SubmitArgs& args);
int Jobs(Client& client, const std::string& state);
int Status(Client& client, const std::string& job_id);
int Cancel(Client& client, const std::string& job_id);
int Groups(Client& client);
int Watch(Client& client, const WatchArgs& args);
// format: "table" (timing.md), "csv" (epochs.csv) or "json".
int Report(Client& client, const std::string& job_id, const std::string& format);

// Fail() with a hint on how to reach the coordinator when it is unavailable.
int FailCall(const Client& client, const grpc::Status& status);

}  // namespace gantry::cli
