#include "worker/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/batch_shares.h"
#include "common/status_macros.h"
#include "common/straggler_tracker.h"
#include "report/energy_source.h"
#include "report/progress_line.h"
#include "report/time_to_target.h"
#include "runspec/batch_fit.h"
#include "runspec/learning_rate_rule.h"
#include "spdlog/spdlog.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/data/prefetch_loader.h"
#include "worker/models/model_registry.h"
#include "worker/monitor/peak_rss.h"
#include "worker/monitor/rank_energy.h"
#include "worker/tensor/random.h"
#include "worker/train/device_feed.h"
#include "worker/train/init_from.h"
#include "worker/train/rank_step_report.h"

namespace gantry {
namespace {

constexpr uint64_t kDropoutStream = 0x64726f70ull;  // "drop"
constexpr int64_t kSkipsLogged = 10;                // per batch size; the rest only counted

DebugSlowdown SlowdownFor(const TrainConfig& c, int rank) {
  if (rank != c.debug_slow_rank) return {};
  return DebugSlowdown{c.debug_slow_ms, c.debug_slow_factor};
}

// The quality part of an epoch's log line: the judge's class scores where it scored, the
// KID where the epoch has one; empty for an epoch not scored.
std::string QualityText(const EpochRow& row) {
  if (row.quality_fd < 0) return std::string();
  std::string text = absl::StrFormat(", quality: FD %.3f", row.quality_fd);
  if (row.quality_confidence >= 0) {
    absl::StrAppendFormat(&text, ", class entropy %.3f/%.3f, confidence %.3f", row.quality_class_entropy,
                          row.quality_marginal_entropy, row.quality_confidence);
  }
  if (std::isfinite(row.quality_kid)) absl::StrAppendFormat(&text, ", KID %.4g", row.quality_kid);
  return text;
}

// The log line of a finished epoch.
void LogEpochDone(const EpochRow& row, const std::vector<int64_t>& shares, const std::string& png) {
  spdlog::info("batch {} epoch {} done: {:.1f} s, {} steps, steady {:.1f} ms/step, {:.1f} samples/s, all-reduce "
               "{:.1f} ms/step ({:.0f}%), d_loss {:.4f} g_loss {:.4f}, shares {}, loss scale G/D {}/{}, skipped G/D "
               "{}/{}, peak RSS {:.0f} MiB, {:.0f} J{}{}; samples: {}",
               row.batch_size, row.epoch, row.seconds, row.steps, row.steady_step_ms, row.samples_per_s,
               row.allreduce_ms, 100.0 * row.allreduce_share, row.d_loss, row.g_loss, absl::StrJoin(shares, "/"),
               row.loss_scale_g, row.loss_scale_d, row.skipped_steps_g, row.skipped_steps_d, row.peak_rss_mb,
               row.energy_j, absl::StrCat(" (", EnergySourceName(row.energy_source), ")"),
               QualityText(row), png);
}

}  // namespace

// The epoch in progress: its steps, sums, progress line, the ranks' reports and energy.
struct Trainer::Epoch {
  Epoch(const Trainer& t, BatchRun& run)
      : number(run.epoch),
        first(run.step_in_epoch),
        end(std::min(StepsPerEpoch(t.data_.count(), run.batch), first + run.steps_left)),
        rows(ShareRanges(run.shares)[static_cast<size_t>(t.comm_.rank())]),
        before(first > 0 ? run.resumed : EpochInProgress{}),
        acc(run.batch, number, before.sums),
        progress(t.clock_, t.config_.progress_seconds, DescribePrecision(t.config_.mixed, t.comm_.size())),
        weights(GradientWeights(run.shares)),
        reports(static_cast<size_t>(t.comm_.size())),
        flags_before(run.tracker.flag_count() - before.straggler_flags),
        start(t.clock_.NowSeconds() - before.seconds),
        energy(t.gpu_energy_) {}

  // The epoch's state between two of its steps, as a checkpoint holds it.
  EpochInProgress InProgress(const Clock& clock, const BatchRun& run) const {
    return EpochInProgress{acc.sums(), clock.NowSeconds() - start, run.tracker.flag_count() - flags_before};
  }

  const int64_t number;
  const int64_t first;  // > 0: resumed part way through
  const int64_t end;
  const RowRange rows;  // this rank's rows of every global batch
  const EpochInProgress before;
  EpochAccumulator acc;
  ProgressLine progress;
  const std::vector<double> weights;
  std::vector<RankStepReport> reports;
  const int64_t flags_before;
  const double start;
  // Energy: every rank reports the CPU time its process used and, on a GPU run, its
  // GPU's energy in the epoch; rank 0 sums them.
  RankEnergyProbe energy;
  double cpu_s = 0;  // rank 0: all ranks' CPU seconds in this epoch
  double gpu_j = 0;  // rank 0: all ranks' GPU joules in this epoch (NaN: some rank's unmeasured)
};

Trainer::Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder* folder, Communicator& comm,
                 const Clock& clock, Backend& backend)
    : Trainer(config, std::make_unique<InMemoryRows>(data), nullptr, folder, comm, clock, backend) {}

Trainer::Trainer(const TrainConfig& config, const SampleRows& data, const RunFolder* folder, Communicator& comm,
                 const Clock& clock, Backend& backend)
    : Trainer(config, nullptr, &data, folder, comm, clock, backend) {}

Trainer::Trainer(const TrainConfig& config, std::unique_ptr<SampleRows> owned, const SampleRows* data,
                 const RunFolder* folder, Communicator& comm, const Clock& clock, Backend& backend)
    : config_(config),
      owned_data_(std::move(owned)),
      data_(data != nullptr ? *data : *owned_data_),
      folder_(folder),
      comm_(comm),
      clock_(clock),
      backend_(backend),
      samples_(config, backend) {
  comm_options_.timeout_seconds = config.comm_timeout_seconds;
  CHECK(folder_ != nullptr || !is_root()) << "rank 0 needs the run folder";
  if (is_root()) {
    store_.emplace(folder_->CheckpointDir());
    monitor_.emplace(config_, *folder_);
    expectations_ = ExpectationsFor(config_, data_.count());
  }
}

absl::Status Trainer::CheckRunFits() const {
  ASSIGN_OR_RETURN(const std::unique_ptr<GanModel> model, MakeModel(config_));
  const Shape rows = data_.sample_shape();
  if (rows != model->SampleShape()) {
    return absl::InvalidArgumentError(absl::StrCat("the dataset's images are ", rows.ToString(), " but --model ",
                                                   model->name(), " trains on ", model->SampleShape().ToString(),
                                                   " rows; use a dataset of that shape or another --model"));
  }
  for (int64_t batch : config_.batch_sizes) {
    if (batch > data_.count()) {
      return absl::InvalidArgumentError(absl::StrCat("--batch-size ", batch, " exceeds the ", data_.count(),
                                                     " training images; use a batch size <= ", data_.count()));
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
  if (is_root() && observer_) observer_->OnRunFolder(folder_->path());
  resumed_ = resume != nullptr;
  if (resume != nullptr) RETURN_IF_ERROR(StartFromCheckpoint(*resume));
  if (is_root()) store_->RemoveLeftoverTemporaries();
  if (is_root()) monitor_->LogEnergySource();
  const int64_t first_batch = resume != nullptr ? resume->position.batch_index : 0;
  for (int64_t i = first_batch; i < static_cast<int64_t>(config_.batch_sizes.size()); ++i) {
    RETURN_IF_ERROR(TrainOneBatchSize(i, i == first_batch ? resume : nullptr));
  }
  if (is_root()) RETURN_IF_ERROR(monitor_->FinishRun(rows_));
  return is_root() ? rows_ : std::vector<EpochRow>{};
}

absl::Status Trainer::StartFromCheckpoint(const TrainingState& resume) {
  run_step_ = resume.position.run_step;
  checkpointed_step_ = run_step_;
  if (!is_root()) return absl::OkStatus();
  store_->KeepResumedFrom(run_step_);
  rows_ = resume.rows;
  straggler_rows_ = resume.straggler_rows;
  RETURN_IF_ERROR(folder_->ResetRows(rows_, straggler_rows_));
  if (observer_) {
    const SweepPosition& at = resume.position;
    observer_->OnResumed(
        {.run_step = at.run_step, .batch_size = at.batch_size, .epoch = at.epoch, .step_in_epoch = at.step_in_epoch},
        rows_);
  }
  return absl::OkStatus();
}

absl::Status Trainer::StartOverlap(BatchRun& run) {
  if (config_.overlap == OverlapMode::kOff || comm_.size() == 1) return absl::OkStatus();
  const absl::Status status = run.step->EnableOverlap(BucketCaps{.bucket_mb = config_.bucket_mb});
  if (absl::IsUnimplemented(status) || absl::IsFailedPrecondition(status)) {
    if (is_root()) spdlog::info("gradients are all-reduced after backward: {}", std::string(status.message()));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(status);
  if (config_.overlap == OverlapMode::kOn) {
    run.step->UseOverlap(true, /*for_good=*/true);
    return absl::OkStatus();
  }
  run.overlap_trial = std::make_unique<OverlapTrial>();
  if (is_root()) {
    spdlog::info("--overlap auto: steps {}-{} alternate the exchange after backward and the overlapped one; the faster "
                 "is kept",
                 OverlapTrial::kWarmUpSteps + 1, OverlapTrial::kWarmUpSteps + 2 * OverlapTrial::kTrialSteps);
  }
  return absl::OkStatus();
}

absl::Status Trainer::RecordOverlapTrial(BatchRun& run, double step_seconds) {
  OverlapTrial& trial = *run.overlap_trial;
  trial.Record(step_seconds);
  if (!trial.ready()) return absl::OkStatus();
  std::string summary;
  ASSIGN_OR_RETURN(const bool overlapped, trial.Decide(comm_, comm_options_, &summary));
  run.step->UseOverlap(overlapped, /*for_good=*/true);
  run.overlap_trial.reset();
  if (is_root()) spdlog::info("{}", summary);
  return absl::OkStatus();
}

absl::Status Trainer::SetUp(BatchRun& run, const TrainingState* resume) {
  if (resume == nullptr) {
    run.model->Initialize(config_.init, config_.seed);
    if (!config_.init_from.empty()) RETURN_IF_ERROR(InitFromFiles(comm_, config_.init_from, *run.model, comm_options_));
    RETURN_IF_ERROR(BroadcastModel(comm_, *run.model, comm_options_));
  }
  const Device device = backend_.device();
  // Both networks at the rate scaled for this batch size (--lr-scaling), the
  // discriminator's a multiple of it (--d-lr-ratio), warming up alike.
  OptimizerConfig optimizer = config_.optimizer;
  const double g_rate = ScaledLearningRate(optimizer.lr, config_.rate_rule, run.batch);
  optimizer.lr = static_cast<float>(g_rate);
  ASSIGN_OR_RETURN(run.g_opt, MakeOptimizer(optimizer, run.model->g_params().num_params(), device, config_.rate_rule));
  optimizer.lr = static_cast<float>(DiscriminatorRate(g_rate, config_.rate_rule));
  ASSIGN_OR_RETURN(run.d_opt, MakeOptimizer(optimizer, run.model->d_params().num_params(), device, config_.rate_rule));
  run.step = std::make_unique<DataParallelStep>(*run.model, *run.g_opt, *run.d_opt, comm_, backend_, comm_options_,
                                                config_.sync_bn, clock_, SlowdownFor(config_, comm_.rank()),
                                                config_.mixed, gradient_comm_);
  RETURN_IF_ERROR(StartOverlap(run));
  if (is_root() && config_.g_ema > 0) {
    run.g_average = std::make_unique<WeightAverage>(config_.g_ema, run.model->g_params(), backend_);
  }
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
  BatchRun run(config_, std::move(model), data_.count(), batch_index, comm_.size(), clock_);
  RETURN_IF_ERROR(SetUp(run, resume));
  if (run.Done(config_.epochs)) return absl::OkStatus();  // resumed after its last epoch
  if (is_root()) {
    RETURN_IF_ERROR(monitor_->StartBatchSize(run.batch));
    LogBatchSizeStart(run, resume != nullptr);
  }
  while (!run.Done(config_.epochs)) {
    if (run.step_in_epoch == 0) RETURN_IF_ERROR(AgreeOnShares(run));
    ASSIGN_OR_RETURN(EpochRow row, TrainOneEpoch(run));
    ++run.epoch;
    run.step_in_epoch = 0;
    if (is_root()) RETURN_IF_ERROR(FinishEpoch(run, row));
    RETURN_IF_ERROR(StopAtTarget(run, row));
    if (is_root()) {
      RETURN_IF_ERROR(SaveCheckpoint(run, EpochInProgress{}));
      if (observer_) observer_->OnEpochRow(row, RankWindows(run.tracker, run.shares));
    }
  }
  return absl::OkStatus();
}

absl::Status Trainer::StopAtTarget(BatchRun& run, const EpochRow& row) {
  if (!config_.target.stop) return absl::OkStatus();
  const std::optional<QualityGoal> goal = GoalOf(config_.target.fd, config_.target.rel_l2);
  uint8_t reached = is_root() && goal && ReachesGoal(row, *goal) ? 1 : 0;
  RETURN_IF_ERROR(comm_.Broadcast(&reached, 1, 0, comm_options_));
  if (reached == 0) return absl::OkStatus();
  if (is_root()) {
    spdlog::info("global batch {} epoch {} reached the quality target; --stop-at-target ends this batch size here",
                 run.batch, row.epoch);
  }
  run.steps_left = 0;  // in the epoch-end checkpoint too: a resumed run stays stopped
  return absl::OkStatus();
}

void Trainer::LogBatchSizeStart(const BatchRun& run, bool resumed) const {
  const int64_t steps_per_epoch = StepsPerEpoch(data_.count(), run.batch);
  spdlog::info("training {} at global batch {} on {} rank(s) in {}: {} steps/epoch x {} epochs ({} images, {} left "
               "out per epoch)",
               config_.model, run.batch, comm_.size(), DescribePrecision(config_.mixed, comm_.size()), steps_per_epoch,
               config_.epochs, data_.count(), data_.count() - steps_per_epoch * run.batch);
  spdlog::info("learning rate at global batch {}: {}", run.batch,
               DescribeLearningRate(config_.optimizer.lr, config_.rate_rule, run.batch));
  if (config_.g_ema > 0) {
    spdlog::info("generator weight average (--g-ema {}): the samples, quality scores and the checkpoints' model are "
                 "the average's",
                 config_.g_ema);
  }
  if (resumed) {
    spdlog::info("resuming at batch {} epoch {} step {}/{} (step {} of the run)", run.batch, run.epoch,
                 run.step_in_epoch, steps_per_epoch, run_step_);
  }
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

void Trainer::CrashIfAsked() const {
  const int64_t at = config_.debug_crash_after_step;
  if (!is_root() || resumed_ || at == 0 || run_step_ != at) return;
  spdlog::warn("--debug-crash-after-step {}: killing this process now, as kill -9 would", at);
  spdlog::default_logger()->flush();
  raise(SIGKILL);
}

absl::StatusOr<EpochRow> Trainer::TrainOneEpoch(BatchRun& run) {
  if (is_root()) monitor_->StartEpoch();
  Epoch e(*this, run);
  run.model->BeginEpoch(e.number - 1);  // the models count epochs from 0
  PrefetchLoader loader(data_, run.sampler, run.batch, e.number, PrefetchOptions{.rows = e.rows, .first_step = e.first});
  DeviceFeed feed(loader, backend_.device());
  for (int64_t step = e.first; step < e.end; ++step) {
    RETURN_IF_ERROR(StopIfAsked(run, e, step));
    const double t0 = clock_.NowSeconds();
    std::optional<Tensor> real = feed.Next();
    if (!real.has_value()) return absl::InternalError("data loader ended before the epoch's last step");
    const double data_wait = clock_.NowSeconds() - t0;
    const GanInputs inputs =
        run.model->StepInputs(*real, run.noise_rng, run.batch, e.rows.begin, e.rows.end, backend_.device());
    const uint64_t dropout_seed = Mix64(config_.seed ^ kDropoutStream ^ Mix64(static_cast<uint64_t>(run.global_step)));
    if (run.overlap_trial) run.step->UseOverlap(run.overlap_trial->NextStepOverlapped());
    const double step_start = clock_.NowSeconds();
    ASSIGN_OR_RETURN(const DataParallelStepResult r, run.step->Run(inputs, run.batch, dropout_seed));
    if (run.overlap_trial) RETURN_IF_ERROR(RecordOverlapTrial(run, clock_.NowSeconds() - step_start));
    if (run.g_average && r.g_stepped) run.g_average->Update(run.g_opt->steps_taken());
    const double gpu_j = step + 1 == e.end ? e.energy.GpuJoulesSinceStart() : 0.0;
    const RankStepReport mine{data_wait, r.compute_s, r.allreduce_s, r.d_loss, r.g_loss, e.energy.TakeCpuSeconds(),
                              gpu_j};
    RETURN_IF_ERROR(comm_.Gather(&mine, sizeof(mine), e.reports.data(), 0, comm_options_));
    ++run.global_step;
    ++run.step_in_epoch;
    --run.steps_left;
    ++run_step_;
    if (is_root()) RETURN_IF_ERROR(RecordStep(run, e, r, step, t0, data_wait));
    if (MidEpochCheckpointDue(step + 1 < e.end)) RETURN_IF_ERROR(SaveCheckpoint(run, e.InProgress(clock_, run)));
    CrashIfAsked();
    if (interrupt_after_ > 0 && ++steps_this_process_ >= interrupt_after_) {
      return absl::AbortedError(absl::StrCat("interrupted after ", steps_this_process_, " steps (test hook)"));
    }
  }
  EpochRow row = e.acc.Finish(clock_.NowSeconds() - e.start, comm_.size(), run.tracker.flag_count() - e.flags_before);
  row.loss_scale_g = run.step->g_scaler().scale();
  row.loss_scale_d = run.step->d_scaler().scale();
  row.peak_rss_mb = PeakRssMiB();
  if (is_root()) monitor_->AddEnergy(e.cpu_s, e.gpu_j, row);
  return row;
}

absl::Status Trainer::StopIfAsked(BatchRun& run, Epoch& e, int64_t step) {
  if (!observer_) return absl::OkStatus();
  const absl::Status stop = StopPoint(comm_, *observer_, comm_options_, run.batch, e.number, step + 1);
  // A stopped run (SIGTERM, a cancel) keeps every step it did, unless the observer
  // declines: the next attempt resumes here rather than at the last periodic checkpoint.
  if (absl::IsCancelled(stop) && is_root() && run_step_ > 0 && run_step_ != checkpointed_step_ &&
      observer_->CheckpointWhenStopping()) {
    spdlog::info("stopping: writing a checkpoint at step {} of the run", run_step_);
    RETURN_IF_ERROR(SaveCheckpoint(run, e.InProgress(clock_, run)));
  }
  return stop;
}

absl::Status Trainer::RecordStep(BatchRun& run, Epoch& e, const DataParallelStepResult& r, int64_t step, double t0,
                                 double data_wait) {
  const GroupStep group = SumRankReports(e.reports, e.weights, comm_.ranks_share_a_process());
  e.cpu_s += group.cpu_s;
  e.gpu_j += group.gpu_j;
  if (!std::isfinite(group.d_loss) || !std::isfinite(group.g_loss)) {
    return absl::InternalError(absl::StrFormat(
        "batch %d epoch %d step %d: loss is not finite (d_loss %g, g_loss %g); lower --lr", run.batch, e.number,
        step + 1, group.d_loss, group.g_loss));
  }
  e.acc.AddSkips(!r.g_stepped, !r.d_stepped);
  ReportSkips(run, r, step + 1);
  run.tracker.AddStep(run.global_step, group.timings);
  RETURN_IF_ERROR(RecordStragglers(run, e.number));
  e.acc.AddStep(clock_.NowSeconds() - t0, data_wait, r.allreduce_s, group.d_loss, group.g_loss,
                r.allreduce_exposed_s);
  e.progress.MaybePrint(run.batch, e.number, config_.epochs, step + 1, e.end, e.acc);
  monitor_->OnStep({.global_step = run.global_step, .d_loss = group.d_loss, .g_loss = group.g_loss,
                    .loss_scale_g = run.step->g_scaler().scale(), .loss_scale_d = run.step->d_scaler().scale(),
                    .samples_per_s = e.acc.RecentSamplesPerSecond()});
  if (observer_) {
    observer_->OnStep({.batch_size = run.batch, .epoch = e.number, .step = step + 1, .steps_in_epoch = e.end,
                       .global_step = run.global_step, .step_seconds = clock_.NowSeconds() - t0,
                       .samples_per_s = e.acc.RecentSamplesPerSecond(), .d_loss = e.acc.mean_d_loss(),
                       .g_loss = e.acc.mean_g_loss()});
  }
  return absl::OkStatus();
}

absl::Status Trainer::RecordStragglers(BatchRun& run, int64_t epoch) {
  for (const StragglerEvent& e : run.tracker.TakeNewEvents()) {
    spdlog::warn("{}", DescribeEvent(e));
    RETURN_IF_ERROR(folder_->AppendStragglerRow(e, run.batch, epoch));
    absl::StrAppend(&straggler_rows_, StragglerCsvLine(e, run.batch, epoch), "\n");
    if (observer_) observer_->OnStraggler(e, run.batch, epoch);
  }
  return absl::OkStatus();
}

void Trainer::set_gpu_energy(const NvmlEnergyCounter* counter) {
  gpu_energy_ = counter;
  if (!is_root() || counter == nullptr) return;
  const bool others = comm_.size() > 1 && !comm_.ranks_share_a_process();  // threads share rank 0's GPU
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

absl::Status Trainer::FinishEpoch(BatchRun& run, EpochRow& row) {
  const bool sweep = config_.batch_sizes.size() > 1;
  ASSIGN_OR_RETURN(const std::string png, folder_->SamplePath(run.batch, sweep, row.epoch, "png"));
  ASSIGN_OR_RETURN(const std::string npy, folder_->SamplePath(run.batch, sweep, row.epoch, "npy"));
  {
    // --g-ema: the average makes the samples and their scores; the live weights train on.
    std::optional<WeightAverage::Swapped> averaged;
    if (run.g_average) averaged.emplace(*run.g_average);
    RETURN_IF_ERROR(samples_.Write(*run.model, png, npy, row));
  }
  RETURN_IF_ERROR(folder_->AppendEpochRow(row));
  rows_.push_back(row);
  RETURN_IF_ERROR(monitor_->OnEpochDone(row, run.global_step, png, samples_.held_out()));
  LogEpochDone(row, run.shares, png);
  return absl::OkStatus();
}

absl::Status Trainer::SaveCheckpoint(BatchRun& run, const EpochInProgress& epoch) {
  const double t0 = clock_.NowSeconds();
  TrainingState state = CaptureBatchRun(run, epoch, config_.seed, data_.count(), comm_.size());
  state.position.run_step = run_step_;
  state.rows = rows_;
  state.straggler_rows = straggler_rows_;
  state.settings = settings_record_;
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
