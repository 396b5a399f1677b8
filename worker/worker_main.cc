// gantry-worker: trains a GAN and writes its run folder.
//
//   gantry-worker train --dataset mnist --data-dir DIR --epochs 3 --batch-size 64 --out RUN
//   gantry-worker train --config run.yaml [--flag value ...]   (flags override the file)
//
// Exit codes: 0 trained; 2 bad flags, run file or configuration; 1 failed while running.
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "worker/data/mnist_dataset.h"
#include "worker/train/run_folder.h"
#include "worker/train/run_manifest.h"
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

void LogToConsoleAndFile(const std::string& log_path) {
  auto console = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path);
  auto logger = std::make_shared<spdlog::logger>("gantry", spdlog::sinks_init_list{console, file});
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Keeps only the first `count` images (--limit-images), for quick runs.
void KeepFirstImages(ImageDataset& data, int64_t count) {
  data.pixels.resize(static_cast<size_t>(count * data.channels * data.height * data.width));
  data.labels.resize(static_cast<size_t>(count));
  data.count = count;
}

int Fail(int code, const absl::Status& status) {
  spdlog::error("{}", std::string(status.message()));
  return code;
}

// Trains with `config`; returns the process exit code.
int Train(TrainConfig config) {
  if (config.out.empty()) config.out = DefaultRunFolder();
  absl::StatusOr<RunFolder> folder = RunFolder::Create(config.out);
  if (!folder.ok()) return Fail(kExitUsage, folder.status());
  LogToConsoleAndFile(folder->File("log.txt"));

  const std::string data_dir = EffectiveDataDir(config);
  spdlog::info("loading {} from {}", config.dataset, data_dir);
  absl::StatusOr<ImageDataset> data = LoadMnistDir(data_dir, /*train=*/true);
  if (!data.ok()) return Fail(kExitUsage, data.status());
  if (config.limit_images > 0 && config.limit_images < data->count) KeepFirstImages(*data, config.limit_images);

  Backend& backend = CpuBackend();
  if (absl::Status s = folder->WriteRunJson(RunManifestJson(config, data_dir, data->count, std::string(backend.name())));
      !s.ok()) {
    return Fail(kExitFailure, s);
  }
  Trainer trainer(config, *data, *folder, Clock::Real(), backend);
  absl::StatusOr<std::vector<EpochRow>> rows = trainer.Run();
  if (!rows.ok()) return Fail(kExitFailure, rows.status());
  std::printf("\n%s\n", FormatEpochTable(*rows).c_str());
  spdlog::info("run folder: {} (epochs.csv, samples/, run.json, log.txt)", folder->path());
  spdlog::info("timing table: {}", folder->File("epochs.csv"));
  spdlog::info("samples: {}", folder->File("samples"));
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
  std::string config_path;
  train->add_option("--config", config_path, "YAML or JSON run file of setting: value pairs")
      ->check(CLI::ExistingFile);
  std::map<std::string, std::string> flag_values;
  std::map<std::string, CLI::Option*> flags;
  for (const SettingInfo& s : TrainSettings()) {
    std::string help = s.help;
    if (!s.default_value.empty()) help += " [default: " + s.default_value + "]";
    flags[s.name] = train->add_option("--" + s.name, flag_values[s.name], help);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  RawSettings settings;
  if (!config_path.empty()) {
    absl::StatusOr<RawSettings> from_file = ReadRunFile(config_path);
    if (!from_file.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(from_file.status().message()).c_str());
      return 2;
    }
    settings = *from_file;
  }
  for (const auto& [name, option] : flags) {
    if (option->count() > 0) settings[name] = flag_values[name];
  }
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(settings);
  if (!config.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  return Train(*config);
}
