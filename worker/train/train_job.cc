#include "worker/train/train_job.h"

#include <ctime>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "spec/batch_fit.h"
#include "spec/mixed_precision.h"
#include "spec/datasets.h"
#include "worker/data/flow_dataset.h"
#include "worker/data/mnist_dataset.h"
#include "worker/models/model_registry.h"
#include "worker/train/judge_store.h"
#include "worker/train/nvml_energy.h"
#include "worker/train/resume.h"
#include "worker/train/run_folder.h"
#include "worker/train/run_manifest.h"
#include "worker/train/shared_settings.h"
#include "report/timing_report.h"
#include "worker/train/trainer.h"
#include "worker/train/training_device.h"

namespace gantry {
namespace {

std::string DefaultRunFolder() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return absl::StrFormat("runs/%04d%02d%02d-%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec);
}

TrainJobResult Ended(TrainJobResult r, TrainJobEnd end, absl::Status status = absl::OkStatus()) {
  r.end = end;
  r.status = std::move(status);
  return r;
}

// Every rank learns whether all ranks got `status` OK; rank 0's error, or a generic one.
// A failure of the agreement itself is flagged in `result`.
absl::Status AgreeAllOk(Communicator& comm, const absl::Status& status, const CommOptions& options,
                        const std::string& what, TrainJobResult& result) {
  absl::StatusOr<bool> all_ok = AllRanksOk(comm, status.ok(), options);
  if (!all_ok.ok()) {
    result.collective_failed = true;
    return all_ok.status();
  }
  if (*all_ok) return absl::OkStatus();
  // ABORTED marks an error that is another rank's (that rank reports its own).
  return status.ok() ? absl::AbortedError(absl::StrCat(what, " failed on another rank (see that rank's output)")) : status;
}

// What the run's model trains on (its input shape is a contract: the data is checked
// against it before anything is trained or written).
absl::StatusOr<ImageRequirement> RequirementOf(const TrainConfig& config) {
  ASSIGN_OR_RETURN(const std::unique_ptr<GanModel> model, MakeModel(config));
  const Shape shape = model->SampleShape();
  if (shape.rank() != 3) {
    return absl::InternalError(absl::StrCat("--model ", model->name(), " trains on rows of shape ", shape.ToString(),
                                            ", which no IDX image set has"));
  }
  return ImageRequirement{.channels = shape[0], .height = shape[1], .width = shape[2],
                          .needed_by = absl::StrCat("--model ", model->name())};
}

// The training rows of flow cases (--dataset flow): crops of the model's --image-size,
// the target --horizon frames ahead. Not cached between pool jobs: the rows depend on
// the run's seed, horizon and image size, not only on the folder.
absl::StatusOr<FlowDataset> LoadFlowRows(const TrainConfig& config, const std::string& dir,
                                         const ImageRequirement& need) {
  if (need.channels != kFlowRowChannels || need.height != need.width) {
    return absl::InvalidArgumentError(absl::StrCat(need.needed_by, " trains on rows of ", need.channels, "x",
                                                   need.height, "x", need.width, ", not the ", kFlowRowChannels,
                                                   "xSxS rows of --dataset flow"));
  }
  ASSIGN_OR_RETURN(FlowDataset flow, LoadFlowDataset(dir, {.image_size = need.height,
                                                           .horizon = config.pix2pix.horizon,
                                                           .seed = config.seed,
                                                           .max_rows = config.limit_images,
                                                           .input_noise = config.pix2pix.input_noise}));
  spdlog::info("flow: {} case(s), {} training rows, {} held-out rows; {}", flow.cases.size(), flow.train.count,
               flow.validation.count, flow.split.rule);
  return flow;
}

// The request's source, or the IDX files read into `owned`; refused unless its images
// have the shape the model needs.
absl::StatusOr<const ImageDataset*> LoadData(const DatasetSource& source, const TrainConfig& config,
                                             const std::string& dir, std::optional<ImageDataset>& owned,
                                             std::optional<ImageDataset>& validation) {
  ASSIGN_OR_RETURN(const ImageRequirement need, RequirementOf(config));
  if (config.dataset == "flow") {
    ASSIGN_OR_RETURN(FlowDataset flow, LoadFlowRows(config, dir, need));
    owned = std::move(flow.train);
    validation = std::move(flow.validation);
    return &*owned;
  }
  const ImageDataset* data = nullptr;
  if (source) {
    ASSIGN_OR_RETURN(data, source(dir, config.limit_images, need));
  } else {
    ASSIGN_OR_RETURN(owned, LoadMnistDir(dir, /*train=*/true, &need));
    KeepFirstImages(*owned, config.limit_images);
    data = &*owned;
  }
  RETURN_IF_ERROR(CheckImagesFit(*data, need));
  return data;
}

// Rank 0: the judge --quality asks for, or null: off; auto without a usable cached judge
// (said once) or with a model whose images the judge cannot classify. A judge that
// --quality fast|full asks for and that is missing or damaged refuses the run.
absl::StatusOr<std::unique_ptr<Judge>> QualityJudge(const TrainConfig& config, const std::string& data_dir) {
  if (config.quality == "off") return nullptr;
  const bool asked = config.quality != "auto";
  ASSIGN_OR_RETURN(const ImageRequirement need, RequirementOf(config));
  if (need.channels != 1 || need.height != kJudgeSide || need.width != kJudgeSide) {
    if (!asked) return nullptr;
    return absl::InvalidArgumentError(absl::StrCat("--quality ", config.quality, " scores 1x28x28 images, ",
                                                   need.needed_by, " makes ", need.channels, "x", need.height, "x",
                                                   need.width, "; use --quality off"));
  }
  auto found = FindJudge(config.dataset, data_dir);
  if (!found.ok()) {
    if (asked) return absl::Status(found.status().code(), absl::StrCat("--quality ", config.quality, ": ",
                                                                       found.status().message()));
    spdlog::info("quality: epochs not scored; {}", std::string(found.status().message()));
    return nullptr;
  }
  spdlog::info("quality: scoring {} samples per epoch with the judge {} (test accuracy {:.4f})",
               config.quality == "full" ? 1024 : 64, found->second, found->first->test_accuracy);
  return std::move(found->first);
}

// This rank's GPU energy counter on a GPU run (nvml_energy.h), or nullopt when the run
// is on the CPU, when the rank shares rank 0's GPU (ranks running as threads), or when
// NVML cannot be used here, which is logged with the reason: the epochs' energy then
// comes from RAPL or the estimate.
std::optional<NvmlEnergyCounter> OpenGpuEnergy(const TrainingDevice& device, const Communicator& comm) {
  if (device.pci_bus_id.empty()) return std::nullopt;
  if (comm.rank() != 0 && comm.backend_name() == "local") return std::nullopt;
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(device.pci_bus_id);
  if (counter.ok()) return std::move(*counter);
  spdlog::info("energy: rank {}: the GPU's energy is not measured ({}); energy per epoch from RAPL or the estimate "
               "instead",
               comm.rank(), std::string(counter.status().message()));
  return std::nullopt;
}

// Rank 0: timing.md of the rows.
absl::Status WriteTiming(TrainJobResult& r, const RunFolder& folder, int world_size) {
  r.timing_markdown = TimingMarkdown(r.rows, world_size, DescribePrecision(r.config.mixed, world_size));
  return WriteFileAtomically(folder.File("timing.md"), r.timing_markdown);
}

}  // namespace

TrainJobResult RunTrainJob(Communicator& comm, const TrainJobRequest& request, const LogSetup& set_up_logging) {
  const bool root = comm.rank() == 0;
  CommOptions opts;
  opts.timeout_seconds = 600;  // start-up: other ranks may still be loading data
  TrainJobResult result;
  absl::StatusOr<SharedSettings> shared = ShareSettings(comm, request.settings, opts);
  if (!shared.ok()) {
    // Settings that do not resolve are INVALID_ARGUMENT on every rank; anything else is
    // the broadcast's failure.
    result.collective_failed = !absl::IsInvalidArgument(shared.status());
    set_up_logging(comm.rank(), "");
    return Ended(std::move(result), TrainJobEnd::kRefused, shared.status());
  }
  TrainConfig& config = result.config = shared->config;
  if (config.out.empty()) config.out = shared->raw["out"] = DefaultRunFolder();
  // A dataset the model cannot take (flow with the DCGAN) is refused before anything is written.
  if (absl::Status fits = CheckDatasetFitsModel(config.dataset, config.model, EffectiveDataDir(config)); !fits.ok()) {
    set_up_logging(comm.rank(), "");
    return Ended(std::move(result), TrainJobEnd::kRefused, fits);
  }
  // The shares are known once the world is: a batch that leaves some rank too few rows
  // (BatchNorm needs two) is refused alike on every rank before anything is written.
  for (int64_t batch : config.batch_sizes) {
    if (absl::Status fits = CheckBatchFitsRanks(config, batch, comm.size()); !fits.ok()) {
      set_up_logging(comm.rank(), "");
      return Ended(std::move(result), TrainJobEnd::kRefused, fits);
    }
  }
  // The device before the run folder, so a machine without one leaves no folder behind.
  absl::StatusOr<TrainingDevice> device = OpenTrainingDevice(config, comm, opts, &result.collective_failed);
  if (!device.ok()) {
    set_up_logging(comm.rank(), "");
    return Ended(std::move(result), TrainJobEnd::kRefused, device.status());
  }

  std::optional<RunFolder> folder;
  absl::Status status;
  if (root) {
    absl::StatusOr<RunFolder> opened = request.resume ? RunFolder::Open(config.out) : RunFolder::Create(config.out);
    if (opened.ok()) folder.emplace(*opened);
    status = opened.status();
  }
  set_up_logging(comm.rank(), folder ? folder->File("log.txt") : "");
  status = AgreeAllOk(comm, status, opts, "opening the run folder", result);
  if (!status.ok()) return Ended(std::move(result), TrainJobEnd::kRefused, status);

  if (root) spdlog::info("training on {}", device->description);
  const std::string data_dir = EffectiveDataDir(config);
  if (root) spdlog::info("loading {} from {} on {} rank(s)", config.dataset, data_dir, comm.size());
  std::optional<ImageDataset> owned, validation;
  absl::StatusOr<const ImageDataset*> data = LoadData(request.data, config, data_dir, owned, validation);
  status = AgreeAllOk(comm, data.status(), opts, "loading the data", result);
  if (!status.ok()) return Ended(std::move(result), TrainJobEnd::kRefused, status);
  if (root && config.limit_images > (*data)->count) {
    // Said, not silent: the run trains on fewer images than asked for.
    spdlog::warn("--limit-images {} is more than the {} images in {}; training on all {}", config.limit_images,
                 (*data)->count, data_dir, (*data)->count);
  }

  std::unique_ptr<Judge> judge;
  absl::Status judge_status;
  if (root) {
    absl::StatusOr<std::unique_ptr<Judge>> opened = QualityJudge(config, data_dir);
    judge_status = opened.status();
    if (opened.ok()) judge = std::move(*opened);
  }
  status = AgreeAllOk(comm, judge_status, opts, "opening the quality judge", result);
  if (!status.ok()) return Ended(std::move(result), TrainJobEnd::kRefused, status);

  Backend& backend = *device->backend;
  const std::string product_path = backend.ProductPath(config.mixed.precision);
  if (root) spdlog::info("{} products: {}", PrecisionName(config.mixed.precision), product_path);
  const std::string transport =
      device->gradient_comm ? device->gradient_comm->backend_name() : comm.backend_name();  // of the gradients
  std::optional<TrainingState> state;
  if (request.resume) {
    const CheckpointStore store(root ? folder->CheckpointDir() : "");
    absl::StatusOr<TrainingState> loaded =
        ShareNewestCheckpoint(comm, root ? &store : nullptr, ExpectationsFor(config, (*data)->count), opts);
    if (!loaded.ok()) {  // the same on every rank
      return Ended(std::move(result), TrainJobEnd::kRefused,
                   absl::Status(loaded.status().code(),
                                absl::StrCat("cannot resume ", config.out, ": ", loaded.status().message())));
    }
    if (RunFinished(*loaded, config)) {
      if (!root) return Ended(std::move(result), TrainJobEnd::kAlreadyFinished);
      spdlog::info("{} already finished ({} epoch rows); nothing to train", config.out, loaded->rows.size());
      result.rows = loaded->rows;
      status = folder->ResetRows(loaded->rows, loaded->straggler_rows);
      if (status.ok()) status = WriteTiming(result, *folder, comm.size());
      return Ended(std::move(result), status.ok() ? TrainJobEnd::kAlreadyFinished : TrainJobEnd::kFailed, status);
    }
    state = std::move(*loaded);
  } else if (root) {
    status = folder->WriteRunJson(RunManifestJson(config, shared->raw, data_dir, (*data)->count,
                                                  std::string(backend.name()), product_path, comm.size(), transport));
    if (!status.ok()) return Ended(std::move(result), TrainJobEnd::kFailed, status);
  }
  Trainer trainer(config, **data, folder ? &*folder : nullptr, comm, Clock::Real(), backend);
  trainer.set_observer(request.observer);
  trainer.set_gradient_communicator(device->gradient_comm.get());
  trainer.set_judge(judge.get(), config.quality == "full");
  if (validation) trainer.set_validation(&*validation);
  const std::optional<NvmlEnergyCounter> gpu_energy = OpenGpuEnergy(*device, comm);
  if (gpu_energy) trainer.set_gpu_energy(&*gpu_energy);
  absl::StatusOr<std::vector<EpochRow>> rows = trainer.Run(state ? &*state : nullptr);
  if (!rows.ok()) return Ended(std::move(result), TrainJobEnd::kFailed, rows.status());
  result.rows = std::move(*rows);
  status = root ? WriteTiming(result, *folder, comm.size()) : absl::OkStatus();
  return Ended(std::move(result), status.ok() ? TrainJobEnd::kTrained : TrainJobEnd::kFailed, status);
}

}  // namespace gantry
