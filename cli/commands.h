// The `gantry` subcommands. Each prints its result (a table, or JSON with --json) and
// returns the exit code (cli/rpc_exit_codes.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "cli/connection.h"

namespace gantry::cli {

struct SubmitArgs {
  std::string run_file;                          // YAML/JSON of setting: value pairs; may be empty
  std::map<std::string, std::string> settings;   // from flags; override the run file
  int world_size = 0;
  int max_attempts = 0;
  std::string name;
  bool watch = false;
};

// `gantry rollout JOB_ID --case DIR --steps H ...`: a rollout of a finished run
// (proto/gantry/v1/rollout_spec.proto); unset options keep gantry-worker rollout's defaults.
struct RolloutArgs {
  std::string source_job_id;
  std::string case_dir;     // made absolute against the current folder
  int64_t steps = 0;
  std::optional<int64_t> start_frame, tile, overlap, group, tile_batch;
  std::string blend;
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

int Submit(Connection& client, const SubmitArgs& args);
int Rollout(Connection& client, const RolloutArgs& args);
int Jobs(Connection& client, const std::string& state);
int Status(Connection& client, const std::string& job_id);
int Cancel(Connection& client, const std::string& job_id);
int Groups(Connection& client);
int Watch(Connection& client, const WatchArgs& args);
// format: "table" (timing.md), "csv" (epochs.csv) or "json".
int Report(Connection& client, const std::string& job_id, const std::string& format);

// Fail() with a hint on how to reach the coordinator when it is unavailable.
int FailCall(const Connection& client, const grpc::Status& status);

}  // namespace gantry::cli
