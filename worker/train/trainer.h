// The training run of one rank: for each global batch size of the sweep, a fresh model
// from the same seed trained for the configured epochs by all ranks in lockstep
// (synchronous data-parallel SGD; one rank is the plain single-process case).
//
// Rank 0 owns the outputs: epochs.csv rows, stragglers.csv, samples, progress lines,
// energy, TensorBoard events, timing.png and losses.png (run_monitor.h) and checkpoints (every config.checkpoint_every_steps steps and at each epoch end; see
// checkpoint_store.h). Every step it gathers each rank's timings (O(ranks) numbers) for
// the straggler tracker, and at each epoch start it broadcasts the per-rank shares of
// the global batch (even, or rebalanced by measured speed with --rebalance).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "report/epoch_metrics.h"
#include "runspec/train_config.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/checkpoint/training_state.h"
#include "worker/comm/communicator.h"
#include "worker/data/mnist_dataset.h"
#include "worker/data/sample_rows.h"
#include "worker/eval/judge.h"
#include "worker/monitor/nvml_energy.h"
#include "worker/monitor/run_monitor.h"
#include "worker/run/run_folder.h"
#include "worker/tensor/backend.h"
#include "worker/train/batch_run.h"
#include "worker/train/epoch_samples.h"
#include "worker/train/train_observer.h"

namespace gantry {

class Trainer {
 public:
  // `folder` is used on rank 0 only and may be null elsewhere. All references must
  // outlive the Trainer.
  Trainer(const TrainConfig& config, const SampleRows& data, const RunFolder* folder, Communicator& comm,
          const Clock& clock, Backend& backend);
  // The same over a data set held in memory.
  Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder* folder, Communicator& comm,
          const Clock& clock, Backend& backend);

  // Trains every batch size in turn: from the start, or with `resume` from where a
  // checkpoint left the run. `resume` must be the same on every rank (resume.h shares it)
  // and match the run (CheckMatchesRun); rank 0 first makes epochs.csv and
  // stragglers.csv hold the checkpoint's rows. On rank 0 returns every epoch row of the
  // run, those from before the resume included (also in epochs.csv); other ranks return
  // an empty list.
  absl::StatusOr<std::vector<EpochRow>> Run(const TrainingState* resume = nullptr);

  // For tests of resuming: Run() returns ABORTED after this many steps of this Trainer,
  // writing nothing for the steps since the last checkpoint, as a killed process would.
  // 0: never.
  void InterruptAfterSteps(int64_t steps) { interrupt_after_ = steps; }

  // Follows (and may steer or stop) the run; see train_observer.h. Set it on every rank
  // or on none, before Run(). Run() returns CANCELLED when the observers stop it.
  void set_observer(TrainObserver* observer) { observer_ = observer; }

  // All-reduces the gradients instead of `comm` (NCCL for a GPU run: see
  // DataParallelStep); same ranks as `comm`, set on every rank or on none, before Run().
  void set_gradient_communicator(Communicator* comm) { gradient_comm_ = comm; }

  // Rank 0: the settings record every checkpoint carries (runspec/resume_rules.h's
  // SettingsRecordOf of run.json's settings); unset: checkpoints without one. Before Run().
  void set_settings_record(std::map<std::string, std::string> record) { settings_record_ = std::move(record); }

  // Rank 0: scores each epoch's samples with `judge` (not owned; null: no scores), on
  // the 64 fixed-noise samples, or with `full` on 1024 of them. Before Run().
  void set_judge(const Judge* judge, bool full) { samples_.set_judge(judge, full); }
  // Rank 0, without a judge: scores each epoch's samples by their random features' FD
  // and KID against `reference` (epoch_samples.h). Before Run().
  void set_feature_scorer(const RandomFeatureScorer* scorer, const ReferenceFeatures* reference, bool full) {
    samples_.set_feature_scorer(scorer, reference, full);
  }
  // Held-out rows {7, S, S} of --dataset flow (not owned; rank 0 uses them): each
  // epoch's G is scored on them (epochs.csv val_l1, val_rel_l2) and the samples show
  // the first few as input | prediction | truth instead of the model's sample grid.
  void set_validation(const ImageDataset* rows) { samples_.set_validation(rows); }
  // This rank's GPU energy counter (not owned; null: none) on a GPU run: each epoch's
  // energy is then the sum of the ranks' GPU joules (energy_meter.h). Set on every rank
  // that has one, before Run(); rank 0's decides whether the GPUs are counted, and an
  // epoch where another rank has none falls back to RAPL or the estimate, saying so.
  void set_gpu_energy(const NvmlEnergyCounter* counter);

 private:
  struct Epoch;  // the state of the epoch in progress (trainer.cc)

  // `data` when given, else `owned` (an ImageDataset's adapter).
  Trainer(const TrainConfig& config, std::unique_ptr<SampleRows> owned, const SampleRows* data,
          const RunFolder* folder, Communicator& comm, const Clock& clock, Backend& backend);

  absl::Status CheckRunFits() const;
  absl::Status StartFromCheckpoint(const TrainingState& resume);
  absl::Status TrainOneBatchSize(int64_t batch_index, const TrainingState* resume);
  // --overlap: overlaps the step's gradient exchange with backward where the transport
  // can (collective); where it cannot, says so once and leaves the plain exchange. With
  // auto, starts the trial that picks one (overlap_trial.h).
  absl::Status StartOverlap(BatchRun& run);
  // Every rank, after each step while --overlap auto's trial runs: records the step's
  // time, and once the trial is complete agrees on the exchange to keep (collective).
  absl::Status RecordOverlapTrial(BatchRun& run, double step_seconds);
  absl::Status SetUp(BatchRun& run, const TrainingState* resume);
  void LogBatchSizeStart(const BatchRun& run, bool resumed) const;
  absl::StatusOr<EpochRow> TrainOneEpoch(BatchRun& run);
  absl::Status AgreeOnShares(BatchRun& run);
  // Every rank, before a step: the observer's stop, with a checkpoint of the steps done.
  absl::Status StopIfAsked(BatchRun& run, Epoch& e, int64_t step);
  // Every rank: one step of the epoch, its reports gathered on rank 0.
  absl::Status TrainOneStep(BatchRun& run, Epoch& e, int64_t step);
  // Rank 0: the group's step into the epoch's sums, stragglers, progress and observers.
  absl::Status RecordStep(BatchRun& run, Epoch& e, const DataParallelStepResult& r, int64_t step, double t0,
                          double data_wait);
  absl::Status RecordStragglers(BatchRun& run, int64_t epoch);
  // Rank 0: writes the samples and scores them (into `row`), then the row in epochs.csv.
  absl::Status FinishEpoch(BatchRun& run, EpochRow& row);
  // Rank 0: the checkpoint of the state after the latest step.
  absl::Status SaveCheckpoint(BatchRun& run, const EpochInProgress& epoch);
  bool MidEpochCheckpointDue(bool epoch_goes_on) const;
  // --stop-at-target: every rank ends this batch size (steps_left 0) when rank 0's score of
  // the epoch just finished (`row`, meaningful on rank 0) reaches the target.
  absl::Status StopAtTarget(BatchRun& run, const EpochRow& row);
  // --debug-crash-after-step: rank 0 of a run started afresh dies (SIGKILL) after that step.
  void CrashIfAsked() const;
  // Rank 0: a warning per skipped network step (the first few per batch size).
  void ReportSkips(BatchRun& run, const DataParallelStepResult& r, int64_t step);

  bool is_root() const { return comm_.rank() == 0; }

  const TrainConfig& config_;
  std::unique_ptr<SampleRows> owned_data_;
  const SampleRows& data_;
  const RunFolder* folder_;
  Communicator& comm_;
  const Clock& clock_;
  Backend& backend_;
  CommOptions comm_options_;
  std::optional<CheckpointStore> store_;  // rank 0
  std::optional<RunMonitor> monitor_;     // rank 0: energy, TensorBoard, plots
  std::optional<std::map<std::string, std::string>> settings_record_;  // rank 0: into every checkpoint
  std::optional<CheckpointExpectations> expectations_;  // rank 0: what a usable checkpoint of this run holds
  std::vector<EpochRow> rows_;            // rank 0: every row of the run so far
  std::string straggler_rows_;            // rank 0: every stragglers.csv line so far
  int64_t run_step_ = 0;                  // steps of the whole run so far
  int64_t checkpointed_step_ = -1;        // rank 0: run_step_ of the newest checkpoint
  int64_t steps_this_process_ = 0;
  bool resumed_ = false;                  // Run() continues a checkpoint
  int64_t interrupt_after_ = 0;
  TrainObserver* observer_ = nullptr;  // not owned; null: nobody follows the run
  Communicator* gradient_comm_ = nullptr;  // not owned; null: comm_
  EpochSamples samples_;                   // rank 0: the epochs' samples and their scores
  const NvmlEnergyCounter* gpu_energy_ = nullptr;  // not owned; null: GPU energy not read
};

}  // namespace gantry
