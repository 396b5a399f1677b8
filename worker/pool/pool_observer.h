// The pool mode's TrainObserver: on rank 0 it turns the trainer's steps, straggler
// events, epoch rows and checkpoints into reports for the coordinator (the checkpoint
// as a CheckpointRef: this host, the absolute run folder, where training continues), takes
// the coordinator's shard plans, and stops the run when the job is cancelled, gone, or the process was asked to
// stop; on the other ranks it only passes on a stop signal that process received. The
// trainer's stop agreement then stops every rank before the same step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "worker/pool/job_control.h"
#include "worker/pool/report_buffer.h"
#include "worker/pool/report_sender.h"
#include "worker/train/train_observer.h"

namespace gantry {

// Rank 0.
class PoolObserver final : public TrainObserver {
 public:
  // All must outlive the observer. `plan_wait_seconds` bounds the wait for the
  // coordinator's plan at an epoch's start. `host` is this rank's host name; `prior` the
  // checkpoint the coordinator had for the job when it was acquired (kept while this
  // attempt continues in the same folder and has not written a newer one).
  PoolObserver(ReportBuffer& buffer, ReportSender& sender, JobControl& job, double plan_wait_seconds,
               std::string host, v1::CheckpointRef prior);

  std::optional<std::vector<int64_t>> SharesFor(int64_t batch_size, int64_t epoch) override;
  void OnStep(const StepProgress& progress) override;
  void OnStraggler(const StragglerEvent& event, int64_t batch_size, int64_t epoch) override;
  void OnEpochRow(const EpochRow& row, const std::vector<RankWindow>& windows) override;
  bool ShouldStop() override;
  // Not for a job the coordinator gave to another group, which may be resuming from the
  // same folder.
  bool CheckpointWhenStopping() override;
  void OnRunFolder(const std::string& path) override;
  void OnCheckpoint(const CheckpointInfo& checkpoint) override;
  void OnResumed(const CheckpointInfo& from, const std::vector<EpochRow>& rows) override;

 private:
  void ReportCheckpoint(const CheckpointInfo& at, int64_t unix_ms);

  ReportBuffer& buffer_;
  ReportSender& sender_;
  JobControl& job_;
  const double plan_wait_seconds_;
  const std::string host_;
  const v1::CheckpointRef prior_;
  v1::CheckpointRef checkpoint_;  // as last reported
  std::string run_folder_;        // the job's, once known (checked for a later attempt's fence)
};

// Every other rank.
class FollowerObserver final : public TrainObserver {
 public:
  bool ShouldStop() override;
};

}  // namespace gantry
