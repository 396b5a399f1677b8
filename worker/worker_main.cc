// gantry-worker: trains a GAN and writes its run folder.
//
//   gantry-worker train --dataset mnist --data-dir DIR --epochs 3 --batch-size 64 --out RUN
//   gantry-worker train --config run.yaml [--flag value ...]   (flags override the file)
//   gantry-worker train --resume RUN                            (continue from RUN's newest checkpoint)
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
#include <ctime>
#include <map>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/data/mnist_dataset.h"
#include "worker/train/checkpoint_summary.h"
#include "worker/train/resume.h"
#include "worker/train/run_folder.h"
#include "worker/train/run_manifest.h"
#include "worker/train/shared_settings.h"
#include "worker/train/timing_report.h"
#include "worker/train/train_config.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;

std::string DefaultRunFolder() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return absl::StrFormat("runs/%04d%02d%02d-%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec);
}

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

// Rank 0: timing.md and the closing summary.
int Report(const std::vector<EpochRow>& rows, const RunFolder& folder, const TrainConfig& config, int world_size) {
  const std::string timing = TimingMarkdown(rows, world_size, DescribePrecision(config.mixed, world_size));
  if (absl::Status s = WriteFileAtomically(folder.File("timing.md"), timing); !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return kExitFailure;
  }
  std::printf("\n%s\n%s\n", FormatEpochTable(rows).c_str(), timing.c_str());
  spdlog::info("run folder: {} (epochs.csv, timing.md, samples/, checkpoints/, run.json, log.txt)", folder.path());
  spdlog::info("timing table: {}", folder.File("timing.md"));
  spdlog::info("samples: {}", folder.File("samples"));
  return 0;
}

// `resume`: the settings came from a run folder's run.json, whose run is continued.
int Train(Group& group, const absl::StatusOr<RawSettings>& settings, bool resume) {
  Communicator& comm = group.comm();
  const bool root = comm.rank() == 0;
  CommOptions opts;
  opts.timeout_seconds = 600;  // start-up: other ranks may still be loading data
  absl::StatusOr<SharedSettings> shared = ShareSettings(comm, settings, opts);
  if (!shared.ok()) {
    if (root) std::fprintf(stderr, "error: %s\n", std::string(shared.status().message()).c_str());
    return kExitUsage;
  }
  TrainConfig& config = shared->config;
  if (config.out.empty()) config.out = shared->raw["out"] = DefaultRunFolder();

  std::optional<RunFolder> folder;
  absl::Status folder_status;
  if (root) {
    absl::StatusOr<RunFolder> opened = resume ? RunFolder::Open(config.out) : RunFolder::Create(config.out);
    if (opened.ok()) folder.emplace(*opened);
    folder_status = opened.status();
  }
  SetUpLogging(comm.rank(), folder ? folder->File("log.txt") : "");
  if (!folder_status.ok()) spdlog::error("{}", std::string(folder_status.message()));
  absl::StatusOr<bool> agreed = AllRanksOk(comm, folder_status.ok(), opts);
  if (!agreed.ok() || !*agreed) return kExitUsage;

  const std::string data_dir = EffectiveDataDir(config);
  if (root) spdlog::info("loading {} from {} on {} rank(s)", config.dataset, data_dir, comm.size());
  absl::StatusOr<ImageDataset> data = LoadMnistDir(data_dir, /*train=*/true);
  if (!data.ok()) spdlog::error("{}", std::string(data.status().message()));
  agreed = AllRanksOk(comm, data.ok(), opts);
  if (!agreed.ok() || !*agreed) return kExitUsage;
  KeepFirstImages(*data, config.limit_images);

  Backend& backend = CpuBackend();
  std::optional<TrainingState> state;
  if (resume) {
    const CheckpointStore store(root ? folder->CheckpointDir() : "");
    absl::StatusOr<TrainingState> loaded =
        ShareNewestCheckpoint(comm, root ? &store : nullptr, ExpectationsFor(config, data->count), opts);
    if (!loaded.ok()) {  // the same on every rank: no abort needed
      if (root) spdlog::error("cannot resume {}: {}", config.out, std::string(loaded.status().message()));
      return kExitUsage;
    }
    if (RunFinished(*loaded, config)) {
      if (!root) return 0;
      spdlog::info("{} already finished ({} epoch rows); nothing to train", config.out, loaded->rows.size());
      const absl::Status s = folder->ResetRows(loaded->rows, loaded->straggler_rows);
      if (!s.ok()) spdlog::error("{}", std::string(s.message()));
      return s.ok() ? Report(loaded->rows, *folder, config, comm.size()) : kExitFailure;
    }
    state = std::move(*loaded);
  } else if (root) {
    const std::string manifest = RunManifestJson(config, shared->raw, data_dir, data->count,
                                                 std::string(backend.name()), comm.size(), comm.backend_name());
    if (absl::Status s = folder->WriteRunJson(manifest); !s.ok()) {
      spdlog::error("{}", std::string(s.message()));
      group.Exit(kExitFailure);
    }
  }
  Trainer trainer(config, *data, folder ? &*folder : nullptr, comm, Clock::Real(), backend);
  absl::StatusOr<std::vector<EpochRow>> rows = trainer.Run(state ? &*state : nullptr);
  if (!rows.ok()) {
    spdlog::error("{}", std::string(rows.status().message()));
    group.Exit(absl::IsInvalidArgument(rows.status()) ? kExitUsage : kExitFailure);
  }
  return root ? Report(*rows, *folder, config, comm.size()) : 0;
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
  return Train(*group, settings, !resume_dir.empty());
}
