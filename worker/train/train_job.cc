#include "worker/train/train_job.h"

#include <ctime>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/machine_memory.h"
#include "common/status_macros.h"
#include "report/time_to_target.h"
#include "report/timing_report.h"
#include "runspec/batch_fit.h"
#include "runspec/datasets.h"
#include "runspec/learning_rate_rule.h"
#include "runspec/memory_estimate.h"
#include "runspec/mixed_precision.h"
#include "spdlog/spdlog.h"
#include "worker/checkpoint/share_checkpoint.h"
#include "worker/comm/broadcast_string.h"
#include "worker/data/flow_dataset.h"
#include "worker/data/mnist_dataset.h"
#include "worker/data/packed_image_rows.h"
#include "worker/data/sample_rows.h"
#include "worker/eval/image_reference.h"
#include "worker/eval/judge_store.h"
#include "worker/eval/random_feature_scorer.h"
#include "worker/models/model_registry.h"
#include "worker/monitor/nvml_energy.h"
#include "worker/run/recorded_run.h"
#include "worker/run/resume.h"
#include "worker/run/run_folder.h"
#include "worker/run/run_manifest.h"
#include "worker/run/shared_settings.h"
#include "worker/tensor/backend_registry.h"
#include "worker/train/image_set_for_run.h"
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
  const int64_t unroll = config.pix2pix.unroll.steps;
  if (need.channels != FlowWindowChannels(unroll) || need.height != need.width) {
    return absl::InvalidArgumentError(absl::StrCat(need.needed_by, " trains on rows of ", need.channels, "x",
                                                   need.height, "x", need.width, ", not the ",
                                                   FlowWindowChannels(unroll), "xSxS rows of --dataset flow"));
  }
  ASSIGN_OR_RETURN(FlowDataset flow, LoadFlowDataset(dir, {.image_size = need.height,
                                                           .horizon = config.pix2pix.horizon,
                                                           .unroll = unroll,
                                                           .seed = config.seed,
                                                           .max_rows = config.limit_images,
                                                           .input_noise = config.pix2pix.input_noise}));
  spdlog::info("flow: {} case(s), {} training rows, {} held-out rows; {}", flow.cases.size(), flow.train.count,
               flow.validation.count, flow.split.rule);
  if (unroll > 1) {
    const UnrollConfig& u = config.pix2pix.unroll;
    spdlog::info("flow: unrolled training: windows of {} frames ({} steps of --horizon {}), loss on {}{}{}", unroll + 1,
                 unroll, config.pix2pix.horizon, u.pushforward || u.loss == UnrollLoss::kLast ? "the last step" : "every step",
                 u.pushforward ? ", gradients through the last step only (--pushforward)" : "",
                 u.curriculum_epochs > 0 ? absl::StrCat(", from 1 step adding one every ", u.curriculum_epochs, " epoch(s)")
                                         : std::string());
  }
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
  auto found = FindJudge(config.dataset, data_dir,
                         {.channels = need.channels, .side = need.height, .classes = kJudgeClasses});
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
  if (comm.rank() != 0 && comm.ranks_share_a_process()) return std::nullopt;
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(device.pci_bus_id);
  if (counter.ok()) return std::move(*counter);
  spdlog::info("energy: rank {}: the GPU's energy is not measured ({}); energy per epoch from RAPL or the estimate "
               "instead",
               comm.rank(), std::string(counter.status().message()));
  return std::nullopt;
}

// timing.md's account of the learning rate each batch size trained at.
std::string LearningRateMarkdown(const TrainConfig& c) {
  std::string md = "\n## Learning rate\n\n";
  for (int64_t batch : c.batch_sizes) {
    absl::StrAppend(&md, "- global batch ", batch, ": ", DescribeLearningRate(c.optimizer.lr, c.rate_rule, batch),
                    "\n");
  }
  return md;
}

// Rank 0: timing.md of the rows.
absl::Status WriteTiming(TrainJobResult& r, const RunFolder& folder, int world_size) {
  r.timing_markdown = TimingMarkdown(r.rows, world_size, DescribePrecision(r.config.mixed, world_size));
  r.timing_markdown += LearningRateMarkdown(r.config);
  if (auto goal = GoalOf(r.config.target.fd, r.config.target.rel_l2)) {
    r.timing_markdown += TimeToTargetMarkdown(r.rows, *goal);
  }
  return WriteFileAtomically(folder.File("timing.md"), r.timing_markdown);
}

// One job on one rank, as a sequence of steps. The steps up to training are agreements:
// each ends on every rank alike, so a failed one refuses the job (kRefused) everywhere.
class TrainJob {
 public:
  TrainJob(Communicator& comm, const TrainJobRequest& request, const LogSetup& set_up_logging)
      : comm_(comm), request_(request), set_up_logging_(set_up_logging), root_(comm.rank() == 0) {
    opts_.timeout_seconds = 600;  // start-up: other ranks may still be loading data
  }

  TrainJobResult Run() {
    for (absl::Status (TrainJob::*step)() :
         {&TrainJob::ResolveSettings, &TrainJob::OpenRunFolder, &TrainJob::LoadTrainingData}) {
      if (absl::Status s = (this->*step)(); !s.ok()) return End(TrainJobEnd::kRefused, s);
    }
    // A resume's checkpoint (and its settings record) before the quality judge: a run
    // whose settings changed is refused for that, whatever the judge would say.
    if (request_.resume) {
      if (absl::Status s = LoadCheckpoint(); !s.ok()) return End(TrainJobEnd::kRefused, s);
    }
    if (absl::Status s = OpenQualityJudge(); !s.ok()) return End(TrainJobEnd::kRefused, s);
    if (root_) {
      const std::string products = device_->backend->ProductPath(result_.config.mixed.precision);
      spdlog::info("{} products: {}", PrecisionName(result_.config.mixed.precision), products);
    }
    if (request_.resume) {
      if (RunFinished(*state_, result_.config)) return EndFinishedRun();
      if (root_) {
        if (absl::Status s = RecordResumeChanges(result_.config.out, grown_); !s.ok()) {
          return End(TrainJobEnd::kFailed, s);
        }
      }
    } else if (root_) {
      if (absl::Status s = WriteManifest(); !s.ok()) return End(TrainJobEnd::kFailed, s);
    }
    const absl::Status s = Train();
    return End(s.ok() ? TrainJobEnd::kTrained : TrainJobEnd::kFailed, s);
  }

 private:
  TrainJobResult End(TrainJobEnd end, absl::Status status) {
    if (!logging_set_up_) set_up_logging_(comm_.rank(), "");
    result_.end = end;
    result_.status = std::move(status);
    return std::move(result_);
  }

  // Every rank learns whether all ranks got `status` OK; rank 0's error, or a generic one.
  // A failure of the agreement itself is flagged in the result.
  absl::Status AgreeAllOk(const absl::Status& status, const std::string& what) {
    absl::StatusOr<bool> all_ok = AllRanksOk(comm_, status.ok(), opts_);
    if (!all_ok.ok()) {
      result_.collective_failed = true;
      return all_ok.status();
    }
    if (*all_ok) return absl::OkStatus();
    // ABORTED marks an error that is another rank's (that rank reports its own).
    return status.ok() ? absl::AbortedError(absl::StrCat(what, " failed on another rank (see that rank's output)"))
                       : status;
  }

  // Rank 0's settings on every rank, checked against the group, and the device opened.
  absl::Status ResolveSettings() {
    absl::StatusOr<SharedSettings> shared = ShareSettings(comm_, request_.settings, opts_);
    if (!shared.ok()) {
      // Settings that do not resolve are INVALID_ARGUMENT on every rank; anything else is
      // the broadcast's failure.
      result_.collective_failed = !absl::IsInvalidArgument(shared.status());
      return shared.status();
    }
    shared_ = *std::move(shared);
    TrainConfig& config = result_.config = shared_.config;
    if (config.out.empty()) config.out = shared_.raw["out"] = DefaultRunFolder();
    // A dataset the model cannot take (flow with the DCGAN) is refused before anything is written.
    RETURN_IF_ERROR(CheckDatasetFitsModel(config.dataset, config.model, EffectiveDataDir(config)));
    // A batch that leaves some rank too few rows (BatchNorm needs two) is refused alike on
    // every rank before anything is written.
    for (int64_t batch : config.batch_sizes) RETURN_IF_ERROR(CheckBatchFitsRanks(config, batch, comm_.size()));
    // The device before the run folder, so a machine without one leaves no folder behind.
    absl::StatusOr<TrainingDevice> device = OpenTrainingDevice(config, comm_, opts_, &result_.collective_failed);
    if (!device.ok()) return device.status();
    device_ = *std::move(device);
    return absl::OkStatus();
  }

  // Rank 0 creates (or, to resume, opens) the run folder; its log.txt becomes the log.
  absl::Status OpenRunFolder() {
    // Each rank against its own machine, before anything is allocated or written.
    absl::Status status = CheckRunFitsMemory(result_.config, comm_.size(), AvailableMemoryBytes());
    if (root_ && status.ok()) {
      const std::string& out = result_.config.out;
      const RunFolderClaim* claim = request_.claim ? &*request_.claim : nullptr;
      absl::StatusOr<RunFolder> opened = request_.resume ? RunFolder::Open(out, claim) : RunFolder::Create(out, claim);
      if (opened.ok()) folder_.emplace(*opened);
      status = opened.status();
    }
    set_up_logging_(comm_.rank(), folder_ ? folder_->File("log.txt") : "");
    logging_set_up_ = true;
    return AgreeAllOk(status, "opening the run folder");
  }

  absl::Status LoadTrainingData() {
    const TrainConfig& config = result_.config;
    data_dir_ = EffectiveDataDir(config);
    if (root_) {
      spdlog::info("training on {}", device_->description);
      spdlog::info("loading {} from {} on {} rank(s)", config.dataset, data_dir_, comm_.size());
    }
    if (config.dataset == "images") {
      RETURN_IF_ERROR(LoadImageSet());
    } else {
      absl::StatusOr<const ImageDataset*> data = LoadData(request_.data, config, data_dir_, owned_, validation_);
      RETURN_IF_ERROR(AgreeAllOk(data.status(), "loading the data"));
      rows_ = std::make_unique<InMemoryRows>(**data);
    }
    const int64_t held = rows_->count() / (config.mirror ? 2 : 1);
    if (root_ && config.limit_images > held) {
      // Said, not silent: the run trains on fewer images than asked for.
      spdlog::warn("--limit-images {} is more than the {} images in {}; training on all {}", config.limit_images,
                   held, data_dir_, held);
    }
    return absl::OkStatus();
  }

  // --dataset images: rank 0 finds (or packs) the set, every rank maps it and fits the
  // image DCGAN to it; each rank then reads only the records of its rows.
  absl::Status LoadImageSet() {
    TrainConfig& config = result_.config;
    std::string path;
    absl::Status found;
    if (root_) {
      absl::StatusOr<std::string> p = PackedSetForRun(config, data_dir_);
      found = p.status();
      if (p.ok()) path = *p;
    }
    RETURN_IF_ERROR(AgreeAllOk(found, "packing the images"));
    if (absl::Status s = BroadcastString(comm_, path, 0, opts_); !s.ok()) {
      result_.collective_failed = true;
      return s;
    }
    absl::StatusOr<std::unique_ptr<PackedImages>> set = PackedImages::Open(path);
    absl::Status fits = set.status();
    if (fits.ok()) fits = FitRunToImageSet(config, shared_.raw, (*set)->info(), path);
    RETURN_IF_ERROR(AgreeAllOk(fits, "opening the packed images"));
    if (root_) {
      const PackedImagesInfo& info = (*set)->info();
      spdlog::info("{}: {} images of {}x{}x{}, {}{}", path, info.count, info.channels, info.image_size,
                   info.image_size, info.class_names.empty() ? "unlabelled" : absl::StrCat(info.class_names.size(), " classes"),
                   config.mirror ? "; with their mirror images (--mirror)" : "");
    }
    auto rows = std::make_unique<PackedImageRows>(std::shared_ptr<const PackedImages>(std::move(*set)),
                                                  config.limit_images, config.mirror);
    packed_rows_ = rows.get();
    rows_ = std::move(rows);
    return absl::OkStatus();
  }

  absl::Status OpenQualityJudge() {
    absl::Status status;
    if (root_ && packed_rows_ != nullptr) {
      status = OpenImageQuality();
    } else if (root_) {
      absl::StatusOr<std::unique_ptr<Judge>> opened = QualityJudge(result_.config, data_dir_);
      status = opened.status();
      if (opened.ok()) judge_ = std::move(*opened);
    }
    return AgreeAllOk(status, "opening the quality judge");
  }

  // Rank 0, --dataset images: the set's judge when train-judge made one (a set with
  // class folders), else the label-free score (random_feature_scorer.h) against up to
  // kImageReferenceCount of the set's images (image_reference.h). --quality auto
  // and full score 1024 samples an epoch, fast the 64 of the grid.
  absl::Status OpenImageQuality() {
    const TrainConfig& config = result_.config;
    if (config.quality == "off") return absl::OkStatus();
    const bool asked = config.quality != "auto";
    const ImageDcganConfig& d = config.image_dcgan;
    const PackedImagesInfo& info = packed_rows_->set().info();
    if (!info.class_names.empty()) {
      auto found = FindJudge(config.dataset, data_dir_,
                             {.channels = d.channels, .side = d.image_size,
                              .classes = static_cast<int64_t>(info.class_names.size())});
      if (found.ok()) {
        spdlog::info("quality: scoring {} samples per epoch with the judge {} (test accuracy {:.4f})",
                     config.quality == "fast" ? 64 : 1024, found->second, found->first->test_accuracy);
        judge_ = std::move(found->first);
        judge_full_ = config.quality != "fast";
        return absl::OkStatus();
      }
      if (!absl::IsNotFound(found.status())) spdlog::warn("quality: {}", std::string(found.status().message()));
    }
    absl::StatusOr<RandomFeatureScorer> scorer = RandomFeatureScorer::Create(d.channels, d.image_size);
    if (!scorer.ok()) {
      if (asked) return absl::InvalidArgumentError(absl::StrCat("--quality ", config.quality, ": ",
                                                                scorer.status().message(), "; use --quality off"));
      spdlog::info("quality: epochs not scored: {}", std::string(scorer.status().message()));
      return absl::OkStatus();
    }
    const int64_t n = std::min(kImageReferenceCount, info.count);
    const int64_t numel = packed_rows_->sample_shape().numel();
    const std::vector<int64_t> order = ImageReferenceOrder(info.count);
    std::vector<float> images(static_cast<size_t>(n * numel));
    for (int64_t i = 0; i < n; ++i) packed_rows_->CopySample(order[static_cast<size_t>(i)], &images[i * numel]);
    ASSIGN_OR_RETURN(ReferenceFeatures reference,
                     scorer->Reference(*FindBackend(DefaultBackendName()), images.data(), n));
    spdlog::info("quality: scoring {} samples per epoch by the Fréchet distance and KID of their random features "
                 "to {} of the set's images (no labels needed; docs/quality.md)",
                 config.quality == "fast" ? 64 : 1024, n);
    scorer_.emplace(*std::move(scorer));
    reference_.emplace(std::move(reference));
    judge_full_ = config.quality != "fast";
    return absl::OkStatus();
  }

  // The newest usable checkpoint of the run on every rank (the same error everywhere).
  absl::Status LoadCheckpoint() {
    const CheckpointStore store(root_ ? folder_->CheckpointDir() : "");
    absl::StatusOr<SharedCheckpoint> loaded = ShareCheckpoint(
        comm_, root_ ? &store : nullptr, ExpectationsFor(result_.config, rows_->count()), /*step=*/0, opts_);
    if (!loaded.ok()) {
      return absl::Status(loaded.status().code(),
                          absl::StrCat("cannot resume ", result_.config.out, ": ", loaded.status().message()));
    }
    if (root_) spdlog::info("resuming from {}", loaded->path);
    state_ = std::move(loaded->state);
    return AgreeAllOk(root_ ? CheckResumedSettings(loaded->path) : absl::OkStatus(), "checking the settings");
  }

  // Rank 0: the settings the run resumes with against what the checkpoint records
  // (resume.h); more --epochs is kept in grown_, for run.json and log.txt once nothing
  // else refuses the run. A checkpoint from before the record is checked against
  // run.json as it is (a hand edit cannot be seen then; the log says so).
  absl::Status CheckResumedSettings(const std::string& checkpoint) {
    const RawSettings in_use = SettingsRecordOf(RunJsonSettings(result_.config, shared_.raw));
    RawSettings record;
    if (state_->settings) {
      record = *state_->settings;
    } else {
      spdlog::warn(
          "{}: holds no settings record (written before checkpoints carried one); resuming with the "
          "settings in run.json as they are",
          checkpoint);
      ASSIGN_OR_RETURN(const RecordedRun recorded, ReadRecordedRun(result_.config.out));
      record = SettingsRecordOf(recorded.settings);
    }
    absl::StatusOr<std::vector<SettingChange>> grown = CheckSettingsRecord(record, in_use, checkpoint);
    if (!grown.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot resume ", result_.config.out, ": ", grown.status().message()));
    }
    grown_ = *std::move(grown);
    return absl::OkStatus();
  }

  // A resumed run that had already finished: rank 0 makes its rows and timing.md whole.
  TrainJobResult EndFinishedRun() {
    if (!root_) return End(TrainJobEnd::kAlreadyFinished, absl::OkStatus());
    spdlog::info("{} already finished ({} epoch rows); nothing to train", result_.config.out, state_->rows.size());
    result_.rows = state_->rows;
    absl::Status status = folder_->ResetRows(state_->rows, state_->straggler_rows);
    if (status.ok()) status = WriteTiming(result_, *folder_, comm_.size());
    return End(status.ok() ? TrainJobEnd::kAlreadyFinished : TrainJobEnd::kFailed, status);
  }

  // Rank 0: run.json of a new run.
  absl::Status WriteManifest() {
    const Backend& backend = *device_->backend;
    const std::string transport = device_->gradient_comm ? device_->gradient_comm->backend_name()
                                                         : comm_.backend_name();  // of the gradients
    return folder_->WriteRunJson(RunManifestJson(result_.config, shared_.raw, data_dir_, rows_->count(),
                                                 std::string(backend.name()),
                                                 backend.ProductPath(result_.config.mixed.precision), comm_.size(),
                                                 transport));
  }

  absl::Status Train() {
    const TrainConfig& config = result_.config;
    Backend& backend = *device_->backend;
    Trainer trainer(config, *rows_, folder_ ? &*folder_ : nullptr, comm_, Clock::Real(), backend);
    trainer.set_observer(request_.observer);
    if (root_) trainer.set_settings_record(SettingsRecordOf(RunJsonSettings(config, shared_.raw)));
    trainer.set_gradient_communicator(device_->gradient_comm.get());
    const bool full = packed_rows_ != nullptr ? judge_full_ : config.quality == "full";
    trainer.set_judge(judge_.get(), full);
    if (scorer_) trainer.set_feature_scorer(&*scorer_, &*reference_, full);
    if (validation_) trainer.set_validation(&*validation_);
    const std::optional<NvmlEnergyCounter> gpu_energy = OpenGpuEnergy(*device_, comm_);
    if (gpu_energy) trainer.set_gpu_energy(&*gpu_energy);
    ASSIGN_OR_RETURN(result_.rows, trainer.Run(state_ ? &*state_ : nullptr));
    return root_ ? WriteTiming(result_, *folder_, comm_.size()) : absl::OkStatus();
  }

  Communicator& comm_;
  const TrainJobRequest& request_;
  const LogSetup& set_up_logging_;
  const bool root_;
  CommOptions opts_;
  TrainJobResult result_;
  bool logging_set_up_ = false;
  SharedSettings shared_;
  std::optional<TrainingDevice> device_;
  std::optional<RunFolder> folder_;  // rank 0
  std::string data_dir_;
  std::optional<ImageDataset> owned_, validation_;
  std::unique_ptr<SampleRows> rows_;  // the training rows: in memory, or a packed set's
  const PackedImageRows* packed_rows_ = nullptr;  // rows_, when they are a packed set's
  std::unique_ptr<Judge> judge_;  // rank 0; null: no quality scores (or the label-free ones)
  bool judge_full_ = false;        // rank 0, images: score 1024 samples an epoch
  std::optional<RandomFeatureScorer> scorer_;   // rank 0, images without a judge
  std::optional<ReferenceFeatures> reference_;  // its features of the set's images
  std::optional<TrainingState> state_;  // resuming: the checkpoint's
  std::vector<SettingChange> grown_;    // resuming, rank 0: settings that grew (more --epochs)
};

}  // namespace

TrainJobResult RunTrainJob(Communicator& comm, const TrainJobRequest& request, const LogSetup& set_up_logging) {
  return TrainJob(comm, request, set_up_logging).Run();
}

}  // namespace gantry
