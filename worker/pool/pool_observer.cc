#include "worker/pool/pool_observer.h"

#include <filesystem>

#include "absl/time/clock.h"
#include "worker/run/run_folder.h"
#include "worker/pool/metrics_proto.h"
#include "worker/pool/stop_signals.h"

namespace gantry {

PoolObserver::PoolObserver(ReportBuffer& buffer, ReportSender& sender, JobControl& job, double plan_wait_seconds,
                           std::string host, v1::CheckpointRef prior)
    : buffer_(buffer),
      sender_(sender),
      job_(job),
      plan_wait_seconds_(plan_wait_seconds),
      host_(std::move(host)),
      prior_(std::move(prior)) {}

std::optional<std::vector<int64_t>> PoolObserver::SharesFor(int64_t batch_size, int64_t epoch) {
  return job_.WaitForPlan(batch_size, epoch, plan_wait_seconds_);
}

void PoolObserver::OnStep(const StepProgress& progress) { buffer_.SetProgress(ToProgress(progress)); }

void PoolObserver::OnStraggler(const StragglerEvent& event, int64_t batch_size, int64_t epoch) {
  buffer_.AddStraggler(ToStragglerEvent(event, batch_size, epoch));
}

void PoolObserver::OnEpochRow(const EpochRow& row, const std::vector<RankWindow>& windows) {
  buffer_.AddEpochRow(ToEpochMetrics(row), ToRankTimings(windows));
  sender_.Wake();  // the reply carries the next epoch's plan
}

bool PoolObserver::ShouldStop() {
  if (StopSignal() != 0 || job_.cancel_requested() || job_.gone()) return true;
  // Asked at every step: one small file read. The coordinator gave the job to another
  // group that continues in this folder (this group was cut off past its lease): stop now,
  // before a write is refused, and let go of the folder.
  if (run_folder_.empty()) return false;
  const std::string fenced = FencedOutReason(run_folder_, job_.attempt());
  if (fenced.empty()) return false;
  job_.MarkGone(fenced);
  return true;
}

bool PoolObserver::CheckpointWhenStopping() { return !job_.gone(); }

void PoolObserver::OnRunFolder(const std::string& path) {
  std::error_code ignored;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ignored);
  v1::CheckpointRef ref;
  ref.set_host(host_);
  ref.set_run_folder(absolute.empty() ? path : absolute.lexically_normal().string());
  // Continuing in the earlier attempt's folder: its checkpoint stays the newest known
  // until this attempt writes one (OnResumed, OnCheckpoint).
  if (ref.host() == prior_.host() && ref.run_folder() == prior_.run_folder()) ref = prior_;
  checkpoint_ = ref;
  buffer_.SetCheckpoint(checkpoint_);
  run_folder_ = path;
}

void PoolObserver::ReportCheckpoint(const CheckpointInfo& at, int64_t unix_ms) {
  checkpoint_.set_run_step(at.run_step);
  checkpoint_.set_batch_size(at.batch_size);
  checkpoint_.set_epoch(at.epoch);
  checkpoint_.set_step_in_epoch(at.step_in_epoch);
  checkpoint_.set_unix_ms(unix_ms);
  buffer_.SetCheckpoint(checkpoint_);
}

void PoolObserver::OnCheckpoint(const CheckpointInfo& checkpoint) {
  ReportCheckpoint(checkpoint, absl::ToUnixMillis(absl::Now()));
}

void PoolObserver::OnResumed(const CheckpointInfo& from, const std::vector<EpochRow>& rows) {
  // The coordinator stores a resent row once; one it never got (the group died between
  // writing the checkpoint and reporting the row) arrives now.
  for (const EpochRow& row : rows) buffer_.AddEpochRow(ToEpochMetrics(row), {});
  ReportCheckpoint(from, from.run_step == checkpoint_.run_step() ? checkpoint_.unix_ms() : 0);
  sender_.Wake();
}

bool FollowerObserver::ShouldStop() { return StopSignal() != 0; }

}  // namespace gantry
