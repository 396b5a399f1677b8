#include "worker/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/shard_plan.h"
#include "common/status_macros.h"
#include "common/straggler_tracker.h"
#include "report/energy_source.h"
#include "report/progress_line.h"
#include "spec/batch_fit.h"
#include "spdlog/spdlog.h"
#include "worker/data/prefetch_loader.h"
#include "worker/models/model_registry.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"
#include "worker/train/checkpoint_codec.h"
#include "worker/train/device_feed.h"
#include "worker/train/peak_rss.h"
#include "worker/train/flow_validation.h"
#include "worker/train/sample_writer.h"

namespace gantry {
namespace {

constexpr int64_t kSampleCount = 64;                 // an 8x8 grid
constexpr int64_t kFlowSampleRows = 8;               // held-out pairs drawn per epoch (flow)
constexpr uint64_t kSampleStream = 0x73616d706cull;  // "sampl"
constexpr uint64_t kDropoutStream = 0x64726f70ull;   // "drop"
constexpr int64_t kSkipsLogged = 10;                 // per batch size; the rest only counted
constexpr uint64_t kQualityStream = 0x7175616cull;   // "qual": the noise of --quality full
constexpr int64_t kFullQualitySamples = 1024;

// What each rank reports to rank 0 after every step.
struct RankStepReport {
  double data_wait_s;
  double compute_s;
  double allreduce_s;
  double d_loss;
  double g_loss;
  double cpu_s;  // CPU seconds of the rank's process since its previous report (energy estimate)
  // Joules of the rank's GPU (NVML) in the epoch, on its last step; 0 on the others,
  // NaN where the rank could not read its counter.
  double gpu_j;
};

// The energy counter of this rank's GPU now, or nullopt (logged) when there is none or
// it cannot be read.
std::optional<uint64_t> ReadGpuCounter(const NvmlEnergyCounter* counter) {
  if (counter == nullptr) return std::nullopt;
  absl::StatusOr<uint64_t> mj = counter->ReadMillijoules();
  if (!mj.ok()) spdlog::warn("energy: {}", std::string(mj.status().message()));
  return mj.ok() ? std::optional<uint64_t>(*mj) : std::nullopt;
}

// The joules of this rank's GPU since `start` (NaN: not measured, or no counter).
double GpuJoulesSince(const NvmlEnergyCounter* counter, std::optional<uint64_t> start) {
  if (counter == nullptr || !start) return std::nan("");
  const std::optional<uint64_t> now = ReadGpuCounter(counter);
  if (!now) return std::nan("");
  const std::optional<double> joules = NvmlEnergyCounter::JoulesBetween(*start, *now);
  if (!joules) spdlog::warn("energy: {}'s counter went down (the driver was reloaded?)", counter->Describe());
  return joules.value_or(std::nan(""));
}

DebugSlowdown SlowdownFor(const TrainConfig& c, int rank) {
  if (rank != c.debug_slow_rank) return {};
  return DebugSlowdown{c.debug_slow_ms, c.debug_slow_factor};
}

}  // namespace

Trainer::Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder* folder, Communicator& comm,
                 const Clock& clock, Backend& backend)
    : config_(config), data_(data), folder_(folder), comm_(comm), clock_(clock), backend_(backend) {
  comm_options_.timeout_seconds = config.comm_timeout_seconds;
  CHECK(folder_ != nullptr || !is_root()) << "rank 0 needs the run folder";
  if (is_root()) {
    store_.emplace(folder_->CheckpointDir());
    monitor_.emplace(config_, *folder_);
    expectations_ = ExpectationsFor(config_, data_.count);
  }
}

absl::Status Trainer::CheckRunFits() const {
  ASSIGN_OR_RETURN(const std::unique_ptr<GanModel> model, MakeModel(config_));
  const Shape rows{data_.channels, data_.height, data_.width};
  if (rows != model->SampleShape()) {
    return absl::InvalidArgumentError(absl::StrCat("the dataset's images are ", rows.ToString(), " but --model ",
                                                   model->name(), " trains on ", model->SampleShape().ToString(),
                                                   " rows; use a dataset of that shape or another --model"));
  }
  for (int64_t batch : config_.batch_sizes) {
    if (batch > data_.count) {
      return absl::InvalidArgumentError(absl::StrCat("--batch-size ", batch, " exceeds the ", data_.count,
                                                     " training images; use a batch size <= ", data_.count));
    }
    RETURN_IF_ERROR(CheckBatchFitsRanks(config_, batch, comm_.size()));
  }
  const InjectInf& inject = config_.mixed.inject_inf;
  if (inject.active() && inject.rank >= comm_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--debug-inject-inf-rank ", inject.rank,
                                                   " does not exist in a run of ", comm_.size(), " rank(s); use 0 to ",
                                                   comm_.size() - 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EpochRow>> Trainer::Run(const TrainingState* resume) {
  RETURN_IF_ERROR(CheckRunFits());
  int64_t first_batch = 0;
  if (is_root() && observer_) observer_->OnRunFolder(folder_->path());
  if (resume != nullptr) {
    first_batch = resume->position.batch_index;
    run_step_ = resume->position.run_step;
    checkpointed_step_ = run_step_;
    if (is_root()) {
      store_->KeepResumedFrom(run_step_);
      rows_ = resume->rows;
      straggler_rows_ = resume->straggler_rows;
      RETURN_IF_ERROR(folder_->ResetRows(rows_, straggler_rows_));
      if (observer_) {
        const SweepPosition& at = resume->position;
        observer_->OnResumed({.run_step = at.run_step, .batch_size = at.batch_size, .epoch = at.epoch,
                              .step_in_epoch = at.step_in_epoch},
                             rows_);
      }
    }
  }
  if (is_root()) store_->RemoveLeftoverTemporaries();
  if (is_root()) monitor_->LogEnergySource();
  for (int64_t i = first_batch; i < static_cast<int64_t>(config_.batch_sizes.size()); ++i) {
    RETURN_IF_ERROR(TrainOneBatchSize(i, i == first_batch ? resume : nullptr));
  }
  if (is_root()) RETURN_IF_ERROR(monitor_->FinishRun(rows_));
  return is_root() ? rows_ : std::vector<EpochRow>{};
}

absl::Status Trainer::SetUp(BatchRun& run, const TrainingState* resume) {
  if (resume == nullptr) {
    run.model->Initialize(config_.init, config_.seed);
    RETURN_IF_ERROR(BroadcastModel(comm_, *run.model, comm_options_));
  }
  const Device device = backend_.device();
  ASSIGN_OR_RETURN(run.g_opt, MakeOptimizer(config_.optimizer, run.model->g_params().num_params(), device));
  ASSIGN_OR_RETURN(run.d_opt, MakeOptimizer(config_.optimizer, run.model->d_params().num_params(), device));
  run.step = std::make_unique<DataParallelStep>(*run.model, *run.g_opt, *run.d_opt, comm_, backend_, comm_options_,
                                                config_.sync_bn, clock_, SlowdownFor(config_, comm_.rank()),
                                                config_.mixed, gradient_comm_);
  if (resume == nullptr) return absl::OkStatus();
  // Every rank decoded the same checkpoint, so the replicas start equal without a broadcast.
  RETURN_IF_ERROR(RestoreBatchRun(*resume, comm_.size(), run));
  if (is_root() && resume->position.world_size != comm_.size()) {
    spdlog::warn("the checkpoint was taken on {} rank(s) and the run resumes on {}: even shares from here on, so the "
                 "result is no longer bit-identical to an uninterrupted run",
                 resume->position.world_size, comm_.size());
  }
  return absl::OkStatus();
}

absl::Status Trainer::TrainOneBatchSize(int64_t batch_index, const TrainingState* resume) {
  ASSIGN_OR_RETURN(std::unique_ptr<GanModel> model, MakeModel(config_, backend_.device()));
  BatchRun run(config_, std::move(model), data_.count, batch_index, comm_.size(), clock_);
  RETURN_IF_ERROR(SetUp(run, resume));
  if (run.Done(config_.epochs)) return absl::OkStatus();  // resumed after its last epoch
  const int64_t steps_per_epoch = StepsPerEpoch(data_.count, run.batch);
  if (is_root()) {
    RETURN_IF_ERROR(monitor_->StartBatchSize(run.batch));
    spdlog::info("training dcgan at global batch {} on {} rank(s) in {}: {} steps/epoch x {} epochs ({} images, {} "
                 "left out per epoch)",
                 run.batch, comm_.size(), DescribePrecision(config_.mixed, comm_.size()), steps_per_epoch,
                 config_.epochs, data_.count, data_.count - steps_per_epoch * run.batch);
    if (resume != nullptr) {
      spdlog::info("resuming at batch {} epoch {} step {}/{} (step {} of the run)", run.batch, run.epoch,
                   run.step_in_epoch, steps_per_epoch, run_step_);
    }
  }
  while (!run.Done(config_.epochs)) {
    if (run.step_in_epoch == 0) RETURN_IF_ERROR(AgreeOnShares(run));
    ASSIGN_OR_RETURN(EpochRow row, TrainOneEpoch(run));
    ++run.epoch;
    run.step_in_epoch = 0;
    if (is_root()) {
      RETURN_IF_ERROR(FinishEpoch(run, row));
      RETURN_IF_ERROR(SaveCheckpoint(run, EpochInProgress{}));
      if (observer_) observer_->OnEpochRow(row, RankWindows(run.tracker, run.shares));
    }
  }
  return absl::OkStatus();
}

absl::Status Trainer::AgreeOnShares(BatchRun& run) {
  // An observer's plan (the coordinator's, in pool mode) comes first.
  const std::optional<std::vector<int64_t>> planned =
      is_root() && observer_ ? UsableShares(observer_->SharesFor(run.batch, run.epoch), run.batch, comm_.size())
                             : std::nullopt;
  if (planned && *planned != run.shares) {
    spdlog::info("global batch {} epoch {}: shares {} -> {} (planned)", run.batch, run.epoch,
                 absl::StrJoin(run.shares, "/"), absl::StrJoin(*planned, "/"));
    run.shares = *planned;
    run.tracker.ResetWindow();
  } else if (!planned && is_root() && config_.rebalance) {
    if (auto better = PlanRebalance(run.tracker, run.shares, run.batch, MinShare(config_))) {
      spdlog::info("rebalancing global batch {}: shares {} -> {} (by measured throughput)", run.batch,
                   absl::StrJoin(run.shares, "/"), absl::StrJoin(*better, "/"));
      run.shares = *better;
      run.tracker.ResetWindow();
    }
  }
  return comm_.Broadcast(run.shares.data(), static_cast<int64_t>(run.shares.size() * sizeof(int64_t)), 0,
                         comm_options_);
}

bool Trainer::MidEpochCheckpointDue(bool epoch_goes_on) const {
  // The last step of an epoch is followed by the epoch-end checkpoint anyway.
  return is_root() && epoch_goes_on && config_.checkpoint_every_steps > 0 &&
         run_step_ % config_.checkpoint_every_steps == 0;
}

absl::StatusOr<EpochRow> Trainer::TrainOneEpoch(BatchRun& run) {
  const int64_t epoch = run.epoch;
  const int64_t first = run.step_in_epoch;  // > 0: resumed part way through
  const int64_t end = std::min(StepsPerEpoch(data_.count, run.batch), first + run.steps_left);
  const RowRange rows = ShareRanges(run.shares)[static_cast<size_t>(comm_.rank())];
  PrefetchLoader loader(data_, run.sampler, run.batch, epoch, PrefetchOptions{.rows = rows, .first_step = first});
  DeviceFeed feed(loader, backend_.device());
  const EpochInProgress before = first > 0 ? run.resumed : EpochInProgress{};
  EpochAccumulator acc(run.batch, epoch, before.sums);
  ProgressLine progress(clock_, config_.progress_seconds, DescribePrecision(config_.mixed, comm_.size()));
  const std::vector<double> weights = GradientWeights(run.shares);
  std::vector<RankStepReport> reports(static_cast<size_t>(comm_.size()));
  const int64_t flags_before = run.tracker.flag_count() - before.straggler_flags;
  const double epoch_start = clock_.NowSeconds() - before.seconds;
  // Energy: rank 0 reads its meter; every rank reports the CPU time its process used and,
  // on a GPU run, its GPU's energy in the epoch. Ranks that are threads of one process
  // (the local communicator) share that process's count and its GPU, so rank 0's alone
  // is the total.
  if (is_root()) monitor_->StartEpoch();
  const bool ranks_share_a_process = comm_.backend_name() == "local";
  double cpu_mark = ProcessCpuSeconds();
  const std::optional<uint64_t> gpu_mark = ReadGpuCounter(gpu_energy_);
  double epoch_cpu_s = 0;  // rank 0: all ranks' CPU seconds in this epoch
  double epoch_gpu_j = 0;  // rank 0: all ranks' GPU joules in this epoch (NaN: some rank's unmeasured)
  // A checkpoint between two steps of this epoch.
  auto save_mid_epoch = [&] {
    return SaveCheckpoint(
        run, EpochInProgress{acc.sums(), clock_.NowSeconds() - epoch_start, run.tracker.flag_count() - flags_before});
  };
  for (int64_t step = first; step < end; ++step) {
    if (observer_) {
      const absl::Status stop = StopPoint(comm_, *observer_, comm_options_, run.batch, epoch, step + 1);
      // A stopped run (SIGTERM, a cancel) keeps every step it did, unless the observer
      // declines: the next attempt resumes here rather than at the last periodic checkpoint.
      if (absl::IsCancelled(stop) && is_root() && run_step_ > 0 && run_step_ != checkpointed_step_ &&
          observer_->CheckpointWhenStopping()) {
        spdlog::info("stopping: writing a checkpoint at step {} of the run", run_step_);
        RETURN_IF_ERROR(save_mid_epoch());
      }
      RETURN_IF_ERROR(stop);
    }
    const double t0 = clock_.NowSeconds();
    std::optional<Tensor> real = feed.Next();
    if (!real.has_value()) return absl::InternalError("data loader ended before the epoch's last step");
    const double data_wait = clock_.NowSeconds() - t0;
    const GanInputs inputs =
        run.model->StepInputs(*real, run.noise_rng, run.batch, rows.begin, rows.end, backend_.device());
    const uint64_t dropout_seed = Mix64(config_.seed ^ kDropoutStream ^ Mix64(static_cast<uint64_t>(run.global_step)));
    ASSIGN_OR_RETURN(const DataParallelStepResult r, run.step->Run(inputs, run.batch, dropout_seed));
    const double cpu_now = ProcessCpuSeconds();
    const double gpu_j = step + 1 == end ? GpuJoulesSince(gpu_energy_, gpu_mark) : 0.0;
    const RankStepReport mine{data_wait, r.compute_s, r.allreduce_s, r.d_loss, r.g_loss, cpu_now - cpu_mark, gpu_j};
    cpu_mark = cpu_now;
    RETURN_IF_ERROR(comm_.Gather(&mine, sizeof(mine), reports.data(), 0, comm_options_));
    ++run.global_step;
    ++run.step_in_epoch;
    --run.steps_left;
    ++run_step_;

    if (is_root()) {
      double d_loss = 0, g_loss = 0;
      std::vector<StepTiming> timings;
      for (size_t i = 0; i < reports.size(); ++i) {
        d_loss += weights[i] * reports[i].d_loss;
        g_loss += weights[i] * reports[i].g_loss;
        timings.push_back({reports[i].data_wait_s, reports[i].compute_s, reports[i].allreduce_s});
        if (i == 0 || !ranks_share_a_process) {
          epoch_cpu_s += reports[i].cpu_s;
          epoch_gpu_j += reports[i].gpu_j;
        }
      }
      if (!std::isfinite(d_loss) || !std::isfinite(g_loss)) {
        return absl::InternalError(absl::StrFormat(
            "batch %d epoch %d step %d: loss is not finite (d_loss %g, g_loss %g); lower --lr", run.batch, epoch,
            step + 1, d_loss, g_loss));
      }
      acc.AddSkips(!r.g_stepped, !r.d_stepped);
      ReportSkips(run, r, step + 1);
      run.tracker.AddStep(run.global_step, timings);
      for (const StragglerEvent& e : run.tracker.TakeNewEvents()) {
        spdlog::warn("{}", DescribeEvent(e));
        RETURN_IF_ERROR(folder_->AppendStragglerRow(e, run.batch, epoch));
        absl::StrAppend(&straggler_rows_, StragglerCsvLine(e, run.batch, epoch), "\n");
        if (observer_) observer_->OnStraggler(e, run.batch, epoch);
      }
      acc.AddStep(clock_.NowSeconds() - t0, data_wait, r.allreduce_s, d_loss, g_loss);
      progress.MaybePrint(run.batch, epoch, config_.epochs, step + 1, end, acc);
      monitor_->OnStep({.global_step = run.global_step, .d_loss = d_loss, .g_loss = g_loss,
                        .loss_scale_g = run.step->g_scaler().scale(), .loss_scale_d = run.step->d_scaler().scale(),
                        .samples_per_s = acc.RecentSamplesPerSecond()});
      if (observer_) {
        observer_->OnStep({.batch_size = run.batch, .epoch = epoch, .step = step + 1, .steps_in_epoch = end,
                           .global_step = run.global_step, .step_seconds = clock_.NowSeconds() - t0,
                           .samples_per_s = acc.RecentSamplesPerSecond(), .d_loss = acc.mean_d_loss(),
                           .g_loss = acc.mean_g_loss()});
      }
    }
    if (MidEpochCheckpointDue(step + 1 < end)) {
      RETURN_IF_ERROR(save_mid_epoch());
    }
    if (interrupt_after_ > 0 && ++steps_this_process_ >= interrupt_after_) {
      return absl::AbortedError(absl::StrCat("interrupted after ", steps_this_process_, " steps (test hook)"));
    }
  }
  EpochRow row = acc.Finish(clock_.NowSeconds() - epoch_start, comm_.size(), run.tracker.flag_count() - flags_before);
  row.loss_scale_g = run.step->g_scaler().scale();
  row.loss_scale_d = run.step->d_scaler().scale();
  row.peak_rss_mb = PeakRssMiB();
  if (is_root()) monitor_->AddEnergy(epoch_cpu_s, epoch_gpu_j, row);
  return row;
}

void Trainer::set_gpu_energy(const NvmlEnergyCounter* counter) {
  gpu_energy_ = counter;
  if (!is_root() || counter == nullptr) return;
  const bool others = comm_.size() > 1 && comm_.backend_name() != "local";  // threads share rank 0's GPU
  monitor_->CountGpus(absl::StrCat(counter->Describe(), " (rank 0)", others ? " and every other rank's GPU" : ""));
}

void Trainer::ReportSkips(BatchRun& run, const DataParallelStepResult& r, int64_t step) {
  auto report = [&](const char* name, bool stepped, const LossScaler& scaler) {
    if (stepped || ++run.skips_logged > kSkipsLogged) return;
    spdlog::warn("batch {} epoch {} step {}: {}'s gradient holds inf/NaN; {}'s step skipped on every rank, its loss "
                 "scale now {}{}",
                 run.batch, run.epoch, step, name, name, scaler.scale(),
                 run.skips_logged == kSkipsLogged ? " (further skips are only counted, in epochs.csv)" : "");
  };
  report("G", r.g_stepped, run.step->g_scaler());
  report("D", r.d_stepped, run.step->d_scaler());
}

void Trainer::ScoreQuality(BatchRun& run, const Tensor& samples, EpochRow& row) const {
  if (judge_ == nullptr) return;
  Tensor scored = samples;
  if (judge_full_) {
    // Its own fixed noise, the same every epoch, so the epochs' scores compare.
    Rng quality_rng(Mix64(config_.seed ^ kQualityStream));
    scored = GenerateImages(backend_, run.model->generator(), run.model->SampleInputs(quality_rng, kFullQualitySamples));
  }
  // The judge's weights are host memory: a host backend scores, whatever trains.
  const QualityScores q = ScoreImages(*FindBackend(DefaultBackendName()), *judge_, scored.data(), scored.dim(0));
  row.quality_fd = q.frechet;
  row.quality_class_entropy = q.classes.mean_entropy;
  row.quality_marginal_entropy = q.classes.marginal_entropy;
  row.quality_confidence = q.classes.mean_confidence;
}

absl::Status Trainer::FinishEpoch(BatchRun& run, EpochRow& row) {
  const bool held_out = validation_ != nullptr && validation_->count > 0;
  if (held_out) {
    ASSIGN_OR_RETURN(const NextFrameScore score, ScoreNextFrame(backend_, run.model->generator(), *validation_));
    row.val_l1 = score.l1;
    row.val_rel_l2 = score.relative_l2;
    row.val_persistence_l1 = score.persistence_l1;
    row.val_persistence_rel_l2 = score.persistence_relative_l2;
    spdlog::info("batch {} epoch {}: held-out next frame ({} pairs): L1 {:.5f}, relative L2 {:.5f} (persistence, "
                 "copying the input frame: L1 {:.5f}, relative L2 {:.5f})",
                 run.batch, row.epoch, score.rows, score.l1, score.relative_l2, score.persistence_l1,
                 score.persistence_relative_l2);
  }
  const bool sweep = config_.batch_sizes.size() > 1;
  ASSIGN_OR_RETURN(const std::string png, folder_->SamplePath(run.batch, sweep, row.epoch, "png"));
  ASSIGN_OR_RETURN(const std::string npy, folder_->SamplePath(run.batch, sweep, row.epoch, "npy"));
  if (held_out) {
    // The same first held-out pairs every epoch: input | prediction | truth.
    RETURN_IF_ERROR(
        WriteNextFrameSamples(backend_, run.model->generator(), *validation_, kFlowSampleRows, png, npy));
  } else if (run.model->SamplesFromData()) {
    return absl::InvalidArgumentError(absl::StrCat("--model ", run.model->name(),
                                                   " draws its samples from held-out rows, which --dataset ",
                                                   config_.dataset, " has not; use --dataset flow"));
  } else {
    Rng sample_rng(Mix64(config_.seed ^ kSampleStream));
    const Tensor sample_inputs = run.model->SampleInputs(sample_rng, kSampleCount);
    Tensor samples;
    RETURN_IF_ERROR(WriteGeneratorSamples(backend_, run.model->generator(), sample_inputs, png, npy, &samples));
    ScoreQuality(run, samples, row);
  }
  RETURN_IF_ERROR(folder_->AppendEpochRow(row));
  rows_.push_back(row);
  RETURN_IF_ERROR(monitor_->OnEpochDone(row, run.global_step, png, held_out));
  spdlog::info("batch {} epoch {} done: {:.1f} s, {} steps, steady {:.1f} ms/step, {:.1f} samples/s, all-reduce "
               "{:.1f} ms/step ({:.0f}%), d_loss {:.4f} g_loss {:.4f}, shares {}, loss scale G/D {}/{}, skipped G/D "
               "{}/{}, peak RSS {:.0f} MiB, {:.0f} J{}{}; samples: {}",
               run.batch, row.epoch, row.seconds, row.steps, row.steady_step_ms, row.samples_per_s, row.allreduce_ms,
               100.0 * row.allreduce_share, row.d_loss, row.g_loss, absl::StrJoin(run.shares, "/"), row.loss_scale_g,
               row.loss_scale_d, row.skipped_steps_g, row.skipped_steps_d, row.peak_rss_mb, row.energy_j,
               absl::StrCat(" (", EnergySourceName(row.energy_source), ")"),
               row.quality_fd >= 0 ? absl::StrFormat(", quality: FD %.3f, class entropy %.3f/%.3f, confidence %.3f",
                                                     row.quality_fd, row.quality_class_entropy,
                                                     row.quality_marginal_entropy, row.quality_confidence)
                                   : std::string(),
               png);
  return absl::OkStatus();
}

absl::Status Trainer::SaveCheckpoint(BatchRun& run, const EpochInProgress& epoch) {
  const double t0 = clock_.NowSeconds();
  TrainingState state = CaptureBatchRun(run, epoch, config_.seed, data_.count, comm_.size());
  state.position.run_step = run_step_;
  state.rows = rows_;
  state.straggler_rows = straggler_rows_;
  const std::vector<uint8_t> bytes = EncodeCheckpoint(state);
  if (absl::Status s = store_->Save(run_step_, bytes, config_.keep_checkpoints, *expectations_); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("checkpoint at step ", run_step_, ": ", s.message(),
                                               "; the run stops here, the earlier checkpoints are intact"));
  }
  checkpointed_step_ = run_step_;
  spdlog::info("checkpoint {} ({:.1f} MiB in {:.2f} s): batch {} epoch {} step {}", store_->PathFor(run_step_),
               static_cast<double>(bytes.size()) / (1 << 20), clock_.NowSeconds() - t0, run.batch, run.epoch,
               run.step_in_epoch);
  if (observer_) {
    observer_->OnCheckpoint({.run_step = run_step_, .batch_size = run.batch,
                             .epoch = run.epoch, .step_in_epoch = run.step_in_epoch});
  }
  return absl::OkStatus();
}

}  // namespace gantry
