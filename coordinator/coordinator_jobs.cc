// Coordinator: the users' side (submit, list, cancel, report, history) and the shared
// helpers. The worker groups' side is in coordinator_groups.cc.
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "coordinator/coordinator.h"

namespace gantry {
namespace {
constexpr int kDefaultPageSize = 100;
}  // namespace

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED || state == v1::JOB_STATE_CANCELLED;
}

std::string StateName(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_QUEUED: return "queued";
    case v1::JOB_STATE_RUNNING: return "running";
    case v1::JOB_STATE_CANCELLING: return "cancelling";
    case v1::JOB_STATE_SUCCEEDED: return "succeeded";
    case v1::JOB_STATE_FAILED: return "failed";
    case v1::JOB_STATE_CANCELLED: return "cancelled";
    default: return "unspecified";
  }
}

Coordinator::Coordinator(std::unique_ptr<JobStore> store, const SpecValidator& validator, CoordinatorOptions options,
                         const Clock& monotonic, const Clock& wall)
    : validator_(validator),
      options_(options),
      monotonic_(monotonic),
      wall_(wall),
      store_(std::move(store)),
      leases_(static_cast<int64_t>(options.lease_seconds * 1e9)) {}

int64_t Coordinator::NowUnixMs() const { return wall_.NowNanos() / 1000000; }

void Coordinator::NotifyChange() {
  ++change_count_;
  changed_.SignalAll();
}

uint64_t Coordinator::change_count() {
  absl::MutexLock lock(&mu_);
  return change_count_;
}

void Coordinator::WaitForChange(uint64_t seen, double timeout_seconds) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + absl::Seconds(timeout_seconds);
  while (change_count_ == seen && !shutting_down_) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) return;
  }
}

void Coordinator::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  changed_.SignalAll();
}

bool Coordinator::shutting_down() {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

absl::StatusOr<ResolvedSpec> Coordinator::ResolvedFor(const v1::Job& job) {
  auto it = resolved_.find(job.id());
  if (it != resolved_.end()) return it->second;
  ASSIGN_OR_RETURN(ResolvedSpec resolved, validator_.Resolve(job.spec()));
  resolved_[job.id()] = resolved;
  return resolved;
}

absl::Status Coordinator::Transition(v1::Job& job, v1::JobState state, const std::string& message) {
  const int64_t now = NowUnixMs();
  job.set_state(state);
  job.set_updated_unix_ms(now);
  if (IsTerminal(state)) job.set_finished_unix_ms(now);
  RETURN_IF_ERROR(store_->UpdateJob(job));
  v1::JobEvent event;
  event.set_job_id(job.id());
  event.set_unix_ms(now);
  v1::StateChange* change = event.mutable_state();
  change->set_state(state);
  change->set_attempt(job.attempts());
  change->set_group_id(job.group_id());
  change->set_message(message);
  RETURN_IF_ERROR(store_->AppendEvent(event).status());
  spdlog::info("{}: {} ({})", job.id(), StateName(state), message);
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> Coordinator::SubmitJob(const v1::SubmitJobRequest& request) {
  ASSIGN_OR_RETURN(ResolvedSpec resolved, validator_.CheckSubmit(request));
  absl::MutexLock lock(&mu_);
  v1::Job job;
  RETURN_IF_ERROR(store_->Transaction([&]() -> absl::Status {
    ASSIGN_OR_RETURN(int64_t number, store_->NextJobNumber());
    job.set_id(absl::StrCat("job-", number));
    job.set_name(request.name());
    *job.mutable_spec() = request.spec();
    job.set_world_size(request.world_size());
    job.set_max_attempts(request.max_attempts() > 0 ? request.max_attempts() : options_.default_max_attempts);
    job.set_created_unix_ms(NowUnixMs());
    RETURN_IF_ERROR(store_->InsertJob(number, job));
    return Transition(job, v1::JOB_STATE_QUEUED, "submitted");
  }));
  resolved_[job.id()] = std::move(resolved);
  NotifyChange();
  return job;
}

absl::StatusOr<v1::Job> Coordinator::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  return store_->GetJob(job_id);
}

absl::StatusOr<v1::ListJobsResponse> Coordinator::ListJobs(const v1::ListJobsRequest& request) {
  if (!v1::JobState_IsValid(request.state())) {
    return absl::InvalidArgumentError(absl::StrCat("state: ", request.state(), " is not a JobState"));
  }
  if (request.page_size() < 0) return absl::InvalidArgumentError("page_size: must not be negative");
  const int page_size = request.page_size() == 0 ? kDefaultPageSize : std::min(request.page_size(), options_.max_page_size);
  int64_t after = 0;
  if (!request.page_token().empty() && (!absl::SimpleAtoi(request.page_token(), &after) || after < 0)) {
    return absl::InvalidArgumentError("page_token: not a token from a previous ListJobs response");
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(JobStore::JobPage page, store_->ListJobs(request.state(), after, page_size));
  v1::ListJobsResponse response;
  for (v1::Job& job : page.jobs) *response.add_jobs() = std::move(job);
  if (page.more) response.set_next_page_token(absl::StrCat(page.last_number));
  return response;
}

absl::StatusOr<v1::Job> Coordinator::CancelJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(job_id));
  if (IsTerminal(job.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " has already ended (", StateName(job.state()), "); nothing to cancel"));
  }
  if (job.state() == v1::JOB_STATE_CANCELLING) return job;
  const bool queued = job.state() == v1::JOB_STATE_QUEUED;
  RETURN_IF_ERROR(store_->Transaction([&] {
    return queued ? Transition(job, v1::JOB_STATE_CANCELLED, "cancelled while queued")
                  : Transition(job, v1::JOB_STATE_CANCELLING,
                               absl::StrCat("cancel asked; ", job.group_id(), " stops at its next report"));
  }));
  NotifyChange();
  return job;
}

absl::StatusOr<v1::JobReport> Coordinator::GetJobReport(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  v1::JobReport report;
  ASSIGN_OR_RETURN(*report.mutable_job(), store_->GetJob(job_id));
  ASSIGN_OR_RETURN(std::vector<v1::EpochMetrics> epochs, store_->Epochs(job_id));
  // In the sweep's order (a resumed attempt may have replaced an earlier row).
  const auto& sweep = report.job().spec().batch_sizes();
  auto position = [&](int64_t batch) { return std::find(sweep.begin(), sweep.end(), batch) - sweep.begin(); };
  std::stable_sort(epochs.begin(), epochs.end(), [&](const v1::EpochMetrics& a, const v1::EpochMetrics& b) {
    return std::make_pair(position(a.batch_size()), a.epoch()) < std::make_pair(position(b.batch_size()), b.epoch());
  });
  for (v1::EpochMetrics& row : epochs) *report.add_epochs() = std::move(row);
  ASSIGN_OR_RETURN(std::vector<v1::StragglerEvent> stragglers, store_->Stragglers(job_id));
  for (v1::StragglerEvent& event : stragglers) *report.add_stragglers() = std::move(event);
  return report;
}

absl::StatusOr<std::vector<v1::JobEvent>> Coordinator::EventsAfter(const std::string& job_id, int64_t after_sequence,
                                                                   int limit) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(store_->GetJob(job_id).status());
  return store_->EventsAfter(job_id, after_sequence, limit);
}

}  // namespace gantry
