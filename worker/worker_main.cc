// gantry-worker: trains a GAN and writes its run folder.
//
//   gantry-worker train --dataset mnist --data-dir DIR --epochs 3 --batch-size 64 --out RUN
//   gantry-worker train --config run.yaml [--flag value ...]   (flags override the file)
//   gantry-worker train --resume RUN                            (continue from RUN's newest checkpoint)
//   mpirun -np 2 gantry-worker serve --coordinator HOST:PORT     (a worker pool; worker/serve)
//   gantry-worker inspect-checkpoint RUN|FILE                   (check a checkpoint, print it as JSON)
//   mpirun -np 2 gantry-worker train ...                        (synchronous data parallel)
//
// Under mpirun, rank 0's flags are the run's: rank 0 validates them and broadcasts them,
// so no rank can run with a different setting. Rank 0 writes the run folder.
//
// Exit codes: 0 trained, or --resume found the run already finished; 2 bad flags, run
// file, configuration, data, or nothing to resume from; 1 failed while running (under
// mpirun the whole job is aborted, so mpirun exits non-zero).
#include <cstdio>
#include <map>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/serve/serve_command.h"
#include "worker/train/checkpoint_summary.h"
#include "worker/train/resume.h"
#include "worker/train/train_config.h"
#include "worker/train/train_job.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;

// Rank 0 logs to the console and log.txt (when it has a run folder; appended to on
// resume); other ranks log warnings and errors to the console only, tagged with their rank.
void SetUpLogging(int rank, const std::string& log_path) {
  auto console = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
  std::vector<spdlog::sink_ptr> sinks{console};
  if (rank == 0 && !log_path.empty()) sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path));
  auto logger = std::make_shared<spdlog::logger>("gantry", sinks.begin(), sinks.end());
  logger->set_pattern(rank == 0 ? "[%Y-%m-%d %H:%M:%S.%e] [%l] %v"
                                : absl::StrFormat("[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank));
  logger->set_level(rank == 0 ? spdlog::level::info : spdlog::level::warn);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// The process's rank group: MPI under mpirun, else a group of one.
struct Group {
  std::unique_ptr<MpiCommunicator> mpi;
  std::unique_ptr<Communicator> local;
  Communicator& comm() { return mpi ? static_cast<Communicator&>(*mpi) : *local; }

  // Ends the process with `code`; under MPI, ends every rank of the job.
  [[noreturn]] void Exit(int code) {
    spdlog::default_logger()->flush();
    if (mpi && comm().size() > 1) mpi->Abort(code);
    std::exit(code);
  }
};

absl::StatusOr<Group> JoinGroup(int* argc, char*** argv) {
  Group g;
  if (MpiCommunicator::LaunchedUnderMpi()) {
    absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create(argc, argv);
    if (!mpi.ok()) return mpi.status();
    g.mpi = std::move(*mpi);
  } else {
    g.local = LocalGroup(1).Rank(0);
  }
  return g;
}

// Runs the job and turns its end into the exit code.
int Train(Group& group, const TrainJobRequest& request) {
  const TrainJobResult r = RunTrainJob(group.comm(), request, SetUpLogging);
  const bool root = group.comm().rank() == 0;
  const std::string message(r.status.message());
  switch (r.end) {
    case TrainJobEnd::kRefused:
      if (root || !absl::IsAborted(r.status)) spdlog::error("{}", message);
      return kExitUsage;
    case TrainJobEnd::kFailed:
      spdlog::error("{}", message);
      group.Exit(absl::IsInvalidArgument(r.status) ? kExitUsage : kExitFailure);
    case TrainJobEnd::kTrained:
    case TrainJobEnd::kAlreadyFinished:
      break;
  }
  if (!root) return 0;
  std::printf("\n%s\n%s\n", FormatEpochTable(r.rows).c_str(), r.timing_markdown.c_str());
  spdlog::info("run folder: {} (epochs.csv, timing.md, samples/, checkpoints/, run.json, log.txt)", r.config.out);
  spdlog::info("timing table: {}/timing.md", r.config.out);
  spdlog::info("samples: {}/samples", r.config.out);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-worker: trains GANs with synchronous data-parallel SGD"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gantry-worker ") + GANTRY_VERSION);

  CLI::App* train = app.add_subcommand("train", "train a model and write its run folder");
  std::string config_path, resume_dir;
  // Not checked for existence here: only rank 0 reads it (other hosts may lack it), and
  // ReadRunFile reports a missing file by name.
  train->add_option("--config", config_path, "YAML or JSON run file of setting: value pairs");
  train->add_option("--resume", resume_dir,
                    "continue the run in folder RUN from its newest usable checkpoint, with the settings in "
                    "RUN/run.json (only --" + absl::StrJoin(ResumeOverridableSettings(), ", --") +
                        " may be given with it); a finished run is reported and left as it is")
      ->option_text("RUN");
  std::map<std::string, std::string> flag_values;
  std::map<std::string, CLI::Option*> flags;
  for (const SettingInfo& s : TrainSettings()) {
    std::string help = s.help;
    if (!s.default_value.empty()) help += " [default: " + s.default_value + "]";
    flags[s.name] = s.is_flag ? train->add_flag("--" + s.name + "{true}", flag_values[s.name], help)
                              : train->add_option("--" + s.name, flag_values[s.name], help);
  }
  CLI::App* inspect = app.add_subcommand(
      "inspect-checkpoint", "check a checkpoint (as --resume would) and print what it holds, as JSON; exit 2 if damaged");
  std::string inspect_path;
  inspect->add_option("PATH", inspect_path, "a checkpoint file, or a run folder (its newest checkpoint)")->required();
  ServeCommand serve(app);  // `gantry-worker serve`: the worker pool mode (worker/serve)
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (inspect->parsed()) {
    const absl::StatusOr<std::string> summary = CheckpointSummaryJson(inspect_path);
    if (!summary.ok()) std::fprintf(stderr, "error: %s\n", std::string(summary.status().message()).c_str());
    if (summary.ok()) std::fputs(summary->c_str(), stdout);
    return summary.ok() ? 0 : kExitUsage;
  }
  if (serve.selected()) return serve.Run(&argc, &argv);

  // Every rank parses its own command line (so --help works anywhere), but only rank 0's
  // result is used; ShareSettings hands it to the others.
  RawSettings given;
  for (const auto& [name, option] : flags) {
    if (option->count() > 0) given[name] = flag_values[name];
  }
  absl::StatusOr<RawSettings> settings = given;
  if (!resume_dir.empty()) {
    settings = config_path.empty() ? ResumeSettings(resume_dir, given)
                                   : absl::InvalidArgumentError("--config cannot be combined with --resume: the run's "
                                                                "settings come from RUN/run.json");
  } else if (!config_path.empty()) {
    settings = ReadRunFile(config_path);
    if (settings.ok()) {
      for (const auto& [name, value] : given) (*settings)[name] = value;
    }
  }
  if (settings.ok()) {
    if (absl::StatusOr<TrainConfig> checked = ResolveTrainConfig(*settings); !checked.ok()) {
      settings = checked.status();
    }
  }

  absl::StatusOr<Group> group = JoinGroup(&argc, &argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return 1;
  }
  TrainJobRequest request;
  request.settings = settings;
  request.resume = !resume_dir.empty();
  return Train(*group, request);
}
