// gantry: the command-line client of gantry-coordinator.
//
//   gantry submit run.yaml [--epochs 3 ...]   gantry jobs [--state running]
//   gantry rollout JOB_ID --case DIR --steps H [--tile S --overlap O --blend B ...]
//   gantry generate JOB_ID --count K [--seed S --name N ...]
//   gantry status ID    gantry watch ID    gantry cancel ID    gantry report ID [--csv]
//   gantry groups
//
// Every command takes --coordinator HOST:PORT (or GANTRY_COORDINATOR), --token TOKEN|FILE
// (or GANTRY_TOKEN), --json, and --help. Exit codes: cli/rpc_exit_codes.h. Each
// subcommand is one class in cli/*_command.h; this is the only main().
#include <cstdio>
#include <optional>

#include "CLI/CLI.hpp"
#include "cli/cancel_command.h"
#include "cli/generate_command.h"
#include "cli/groups_command.h"
#include "cli/jobs_command.h"
#include "cli/report_command.h"
#include "cli/rollout_command.h"
#include "cli/rpc_exit_codes.h"
#include "cli/seconds_flag.h"
#include "cli/status_command.h"
#include "cli/submit_command.h"
#include "cli/watch_command.h"

namespace gantry::cli {
namespace {

// The flags every subcommand takes (the app falls through to them).
void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags) {
  app.add_option("--coordinator", flags.coordinator,
                 "coordinator address host:port [env GANTRY_COORDINATOR, default 127.0.0.1:50051]");
  app.add_option("--token", flags.token, "bearer token, or a file holding it [env GANTRY_TOKEN]");
  app.add_option("--tls-ca", flags.tls_ca, "PEM CA certificate to verify a TLS coordinator with");
  app.add_flag("--tls", flags.tls, "connect with TLS, verifying against the system's CAs");
  app.add_option("--timeout", flags.timeout_seconds, "seconds each call may take")
      ->default_val(30)
      ->check(SecondsIn(0.001, 86400));
  app.add_flag("--json", flags.json, "print JSON for scripts instead of tables");
}

// The exit code when the command line is not one to run: 0 after --help, kExitUsage
// (with CLI11's message) when it does not parse; nullopt when it parsed.
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return std::nullopt;
}

int Main(int argc, char** argv) {
  CLI::App app{"gantry: submit GAN training runs to gantry-coordinator and follow them"};
  app.footer(ExitCodesHelp());
  app.require_subcommand(1);
  app.fallthrough();
  ConnectionFlags flags;
  AddConnectionFlags(app, flags);
  SubmitCommand submit(app);
  RolloutCommand rollout(app);
  GenerateCommand generate(app);
  JobsCommand jobs(app);
  StatusCommand status(app);
  WatchCommand watch(app);
  CancelCommand cancel(app);
  ReportCommand report(app);
  GroupsCommand groups(app);
  if (std::optional<int> code = Parse(app, argc, argv)) return *code;

  absl::StatusOr<Connection> client = Connection::Connect(flags);
  if (!client.ok()) {
    std::fprintf(stderr, "gantry: %s\n", std::string(client.status().message()).c_str());
    return kExitUsage;
  }
  for (Command* command : std::initializer_list<Command*>{&submit, &rollout, &generate, &jobs, &status, &watch,
                                                          &cancel, &report, &groups}) {
    if (command->selected()) return command->Run(*client);
  }
  return kExitUsage;
}

}  // namespace
}  // namespace gantry::cli

int main(int argc, char** argv) { return gantry::cli::Main(argc, argv); }
