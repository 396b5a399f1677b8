#include "worker/serve/pool_observer.h"

#include "worker/serve/metrics_proto.h"
#include "worker/serve/stop_signals.h"

namespace gantry {

PoolObserver::PoolObserver(ReportBuffer& buffer, ReportSender& sender, JobControl& job, double plan_wait_seconds)
    : buffer_(buffer), sender_(sender), job_(job), plan_wait_seconds_(plan_wait_seconds) {}

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

bool PoolObserver::ShouldStop() { return StopSignal() != 0 || job_.cancel_requested() || job_.gone(); }

bool FollowerObserver::ShouldStop() { return StopSignal() != 0; }

}  // namespace gantry
