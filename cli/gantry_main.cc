// gantry: the command-line client of gantry-coordinator.
//
//   gantry submit run.yaml [--epochs 3 ...]   gantry jobs [--state running]
//   gantry rollout JOB_ID --case DIR --steps H [--tile S --overlap O --blend B ...]
//   gantry status ID    gantry watch ID    gantry cancel ID    gantry report ID [--csv]
//   gantry groups
//
// Every command takes --coordinator HOST:PORT (or GANTRY_COORDINATOR), --token TOKEN|FILE
// (or GANTRY_TOKEN), --json, and --help. Exit codes: cli/rpc_exit_codes.h.
#include <cstdio>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/rpc_exit_codes.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"

namespace gantry::cli {
namespace {

// `gantry submit` takes the flags of `gantry-worker train` that describe a run.
void AddRunSettingFlags(CLI::App* submit, SubmitArgs& args, std::map<std::string, CLI::Option*>& options) {
  for (const std::string& name : RunSpecSettingNames()) {
    const SettingInfo* info = FindSettingInfo(name);
    std::string help = info != nullptr ? info->help : "see proto/gantry/v1/run_spec.proto (not in this build's worker)";
    if (info != nullptr && !info->default_value.empty()) help += " [worker default: " + info->default_value + "]";
    const bool is_switch = info != nullptr && info->is_flag;
    options[name] = is_switch ? submit->add_flag("--" + name + "{true}", args.settings[name], help)
                              : submit->add_option("--" + name, args.settings[name], help);
    options[name]->group("Run settings (as gantry-worker train)");
  }
}

int Main(int argc, char** argv) {
  CLI::App app{"gantry: submit GAN training runs to gantry-coordinator and follow them"};
  app.footer(ExitCodesHelp());
  app.require_subcommand(1);
  app.fallthrough();
  ConnectionFlags flags;
  app.add_option("--coordinator", flags.coordinator,
                 "coordinator address host:port [env GANTRY_COORDINATOR, default 127.0.0.1:50051]");
  app.add_option("--token", flags.token, "bearer token, or a file holding it [env GANTRY_TOKEN]");
  app.add_option("--tls-ca", flags.tls_ca, "PEM CA certificate to verify a TLS coordinator with");
  app.add_flag("--tls", flags.tls, "connect with TLS, verifying against the system's CAs");
  app.add_option("--timeout", flags.timeout_seconds, "seconds each call may take")->default_val(30);
  app.add_flag("--json", flags.json, "print JSON for scripts instead of tables");

  SubmitArgs submit_args;
  std::map<std::string, CLI::Option*> setting_options;
  CLI::App* submit = app.add_subcommand("submit", "queue a training run; prints its job id");
  submit->add_option("run_file", submit_args.run_file, "YAML or JSON run file (setting: value), as gantry-worker's --config");
  submit->add_option("--world-size", submit_args.world_size, "ranks the run needs (0: any group that fits)")
      ->default_val(0);
  submit->add_option("--max-attempts", submit_args.max_attempts, "times it may be handed to a group (0: coordinator's)")
      ->default_val(0);
  submit->add_option("--name", submit_args.name, "a label shown in `gantry jobs`");
  submit->add_flag("--watch", submit_args.watch, "then watch it to the end (exit code as `gantry watch`)");
  AddRunSettingFlags(submit, submit_args, setting_options);

  RolloutArgs rollout_args;
  CLI::App* rollout = app.add_subcommand(
      "rollout", "queue a rollout of a finished pix2pix flow run over a flow case (as gantry-worker rollout, into "
                 "RUN/rollout-<case>/ of that run); prints its job id");
  rollout->add_option("id", rollout_args.source_job_id, "the finished training job to roll out, e.g. job-3")
      ->required();
  rollout->add_option("--case", rollout_args.case_dir,
                      "a flow case folder (make-flow) inside a coordinator --data-root")
      ->required();
  rollout->add_option("--steps", rollout_args.steps, "model steps to roll out")->required();
  std::map<std::string, int64_t> rollout_numbers;
  std::map<std::string, CLI::Option*> rollout_number_options;
  for (const auto& [flag, help] : std::vector<std::pair<std::string, std::string>>{
           {"start-frame", "the true frame to start from [worker default: 0]"},
           {"tile", "tile side; must be the model's --image-size [worker default: it]"},
           {"overlap", "cells shared by neighbouring tiles [worker default: tile / 4]"},
           {"group", "tiles per group; groups go to ranks in runs [worker default: 1]"},
           {"tile-batch", "tiles per generator call [worker default: 4]"}}) {
    rollout_number_options[flag] = rollout->add_option("--" + flag, rollout_numbers[flag], help);
  }
  rollout->add_option("--blend", rollout_args.blend, "gaussian | linear | none [worker default: gaussian]");
  rollout->add_option("--world-size", rollout_args.world_size, "ranks to run it on (0: any group)")->default_val(0);
  rollout->add_option("--max-attempts", rollout_args.max_attempts,
                      "times it may be handed to a group (0: coordinator's)")
      ->default_val(0);
  rollout->add_option("--name", rollout_args.name, "a label shown in `gantry jobs` [default: rollout of ID: CASE]");
  rollout->add_flag("--watch", rollout_args.watch, "then watch it to the end (exit code as `gantry watch`)");

  std::string state, job_id;
  CLI::App* jobs = app.add_subcommand("jobs", "list jobs in submission order");
  jobs->add_option("--state", state, "only jobs in this state: queued, running, cancelling, succeeded, failed, cancelled");
  CLI::App* status = app.add_subcommand("status", "show one job");
  status->add_option("id", job_id, "job id, e.g. job-3")->required();
  WatchArgs watch_args;
  CLI::App* watch = app.add_subcommand("watch", "follow a job: its history, live progress and epoch rows, to the end");
  watch->add_option("id", watch_args.job_id, "job id")->required();
  watch->add_option("--for", watch_args.timeout_seconds, "give up after this many seconds")->default_val(86400);
  watch->add_option("--reconnect", watch_args.reconnect_seconds, "retry an unreachable coordinator this long")
      ->default_val(60);
  CLI::App* cancel = app.add_subcommand("cancel", "cancel a job (a running one stops at its next report)");
  cancel->add_option("id", job_id, "job id")->required();
  bool csv = false;
  CLI::App* report = app.add_subcommand("report", "timing per batch size (timing.md); --csv: epochs.csv rows");
  report->add_option("id", job_id, "job id")->required();
  report->add_flag("--csv", csv, "the rows as epochs.csv");
  CLI::App* groups = app.add_subcommand("groups", "list registered worker groups");

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
  for (auto it = submit_args.settings.begin(); it != submit_args.settings.end();) {
    it = setting_options[it->first]->count() > 0 ? std::next(it) : submit_args.settings.erase(it);
  }

  auto given = [&](const std::string& flag) -> std::optional<int64_t> {
    return rollout_number_options[flag]->count() > 0 ? std::optional<int64_t>(rollout_numbers[flag]) : std::nullopt;
  };
  rollout_args.start_frame = given("start-frame");
  rollout_args.tile = given("tile");
  rollout_args.overlap = given("overlap");
  rollout_args.group = given("group");
  rollout_args.tile_batch = given("tile-batch");

  absl::StatusOr<Connection> client = Connection::Connect(flags);
  if (!client.ok()) {
    std::fprintf(stderr, "gantry: %s\n", std::string(client.status().message()).c_str());
    return kExitUsage;
  }
  if (submit->parsed()) return Submit(*client, submit_args);
  if (rollout->parsed()) return Rollout(*client, rollout_args);
  if (jobs->parsed()) return Jobs(*client, state);
  if (status->parsed()) return Status(*client, job_id);
  if (watch->parsed()) return Watch(*client, watch_args);
  if (cancel->parsed()) return Cancel(*client, job_id);
  if (report->parsed()) return Report(*client, job_id, csv ? "csv" : (flags.json ? "json" : "table"));
  if (groups->parsed()) return Groups(*client);
  return kExitUsage;
}

}  // namespace
}  // namespace gantry::cli

int main(int argc, char** argv) { return gantry::cli::Main(argc, argv); }
