// `gantry watch ID [--for S] [--reconnect S]`: a job's history, then its live progress,
// until it ends. A coordinator that goes away mid-watch (a restart) is retried for
// --reconnect seconds, resuming after the last entry seen, so nothing is printed twice
// or skipped. Exit code: the job's end (0 succeeded, kExitJobFailed, kExitJobCancelled),
// or the failed call's.
#pragma once

#include <string>

#include "cli/command.h"

namespace gantry::cli {

// Bounds of --for and --reconnect (seconds).
inline constexpr double kMinWatchSeconds = 0.001;
inline constexpr double kMaxWatchSeconds = 365 * 86400.0;
inline constexpr double kMaxReconnectSeconds = 86400;

struct WatchArgs {
  std::string job_id;
  double timeout_seconds = 86400;     // the whole watch
  double reconnect_seconds = 60;      // how long to retry a lost coordinator
};

// Follows the job to its end; also what `gantry submit --watch` runs.
int Watch(Connection& client, const WatchArgs& args);

class WatchCommand : public Command {
 public:
  explicit WatchCommand(CLI::App& app);
  int Run(Connection& client) override { return Watch(client, args_); }

 private:
  WatchArgs args_;
};

}  // namespace gantry::cli
