#include "worker/pool/report_sender.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

namespace gantry {

ReportSender::ReportSender(CoordinatorApi& api, std::string group_id, ReportBuffer& buffer, JobControl& job,
                           ReportSenderOptions options)
    : api_(api),
      group_id_(std::move(group_id)),
      buffer_(buffer),
      job_(job),
      options_(options),
      backoff_(Clock::Real(), options.backoff, std::hash<std::string>()(group_id_ + job.job_id())) {
  thread_ = std::thread([this] { Loop(); });
}

ReportSender::~ReportSender() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void ReportSender::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

bool ReportSender::WaitDrained(double timeout_seconds) {
  const absl::Time deadline = absl::Now() + absl::Seconds(timeout_seconds);
  while (true) {
    if (buffer_.Drained()) return true;
    if (job_.gone() || absl::Now() >= deadline) return false;
    absl::MutexLock lock(&mu_);
    wake_ = true;
    const uint64_t seen = sent_;
    auto moved = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_ != seen || stopping_; };
    mu_.AwaitWithDeadline(absl::Condition(&moved), deadline);
  }
}

void ReportSender::Loop() {
  double wait_seconds = 0;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto woken = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return wake_ || stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&woken), absl::Seconds(wait_seconds));
      if (stopping_) return;
      wake_ = false;
    }
    wait_seconds = options_.interval_seconds;
    if (job_.gone()) continue;
    if (!backoff_.Ready()) {
      wait_seconds = std::min(wait_seconds, backoff_.SecondsUntilReady());
      continue;
    }
    const bool reached = SendOnce();
    if (!reached) {
      wait_seconds = backoff_.SecondsUntilReady();
    } else if (buffer_.HasUrgent()) {
      wait_seconds = 0;  // more rows than one report carries
    }
    absl::MutexLock lock(&mu_);
    ++sent_;
  }
}

bool ReportSender::SendOnce() {
  ReportBatch batch = buffer_.Take();
  if (batch.empty()) return true;
  v1::ReportProgressRequest& request = batch.request;
  request.set_group_id(group_id_);
  request.set_job_id(job_.job_id());
  request.set_attempt(job_.attempt());
  absl::StatusOr<v1::ReportProgressResponse> reply = api_.ReportProgress(request);
  if (reply.ok()) {
    if (backoff_.failures() > 0) {
      spdlog::info("reports reach the coordinator again (after {} failed attempts); the buffered ones are sent",
                   backoff_.failures());
    }
    backoff_.RecordSuccess();
    job_.SetReachable(true);
    buffer_.Acknowledge(batch);
    if (reply->has_next_plan()) job_.AddPlan(reply->next_plan());
    if (reply->cancel() && !job_.cancel_requested()) {
      spdlog::info("{}: the coordinator asks to cancel; stopping at the next step", job_.job_id());
      job_.RequestCancel();
    }
    return true;
  }
  const absl::Status& s = reply.status();
  if (absl::IsAborted(s) || absl::IsNotFound(s)) {
    spdlog::warn("{}: dropping the job: {}", job_.job_id(), std::string(s.message()));
    job_.MarkGone(std::string(s.message()));
    return true;
  }
  if (absl::IsInvalidArgument(s)) {
    spdlog::error("{}: the coordinator refused a report ({}); it is dropped", job_.job_id(), std::string(s.message()));
    buffer_.Acknowledge(batch);
    return true;
  }
  backoff_.RecordFailure();
  job_.SetReachable(false);
  if (backoff_.failures() == 1) {
    spdlog::warn("cannot report to the coordinator ({}); training goes on and reports are kept until it is back",
                 std::string(s.message()));
  }
  return false;
}

}  // namespace gantry
