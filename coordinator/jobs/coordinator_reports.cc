// Coordinator: progress reports from the group running a job.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/validation/report_bounds.h"
#include "report/state_names.h"

namespace gantry {
namespace {

absl::Status CheckCount(const char* field, int count, int max) {
  if (count <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", count, " entries; at most ", max, " per report"));
}

absl::Status CheckLength(const char* field, const std::string& value) {
  if (value.size() <= RequestBounds::kMaxStringChars) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": longer than ", RequestBounds::kMaxStringChars, " characters"));
}

absl::Status CheckCheckpointRef(const v1::CheckpointRef& ref) {
  RETURN_IF_ERROR(CheckLength("checkpoint.host", ref.host()));
  RETURN_IF_ERROR(CheckLength("checkpoint.run_folder", ref.run_folder()));
  if (ref.run_step() < 0 || ref.batch_size() < 0 || ref.epoch() < 0 || ref.step_in_epoch() < 0) {
    return absl::InvalidArgumentError("checkpoint: run_step, batch_size, epoch and step_in_epoch must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Coordinator::CheckReportShape(const v1::ReportProgressRequest& request) const {
  RETURN_IF_ERROR(CheckCount("epochs", request.epochs_size(), options_.max_report_items));
  RETURN_IF_ERROR(CheckCount("stragglers", request.stragglers_size(), options_.max_report_items));
  RETURN_IF_ERROR(CheckCount("rank_timings", request.rank_timings_size(), RequestBounds::kMaxWorldSize));
  const v1::JobState final_state = request.final_state();
  if (final_state != v1::JOB_STATE_UNSPECIFIED && final_state != v1::JOB_STATE_QUEUED && !IsTerminal(final_state)) {
    return absl::InvalidArgumentError("final_state: must be SUCCEEDED, FAILED, CANCELLED, QUEUED (released) or unset");
  }
  RETURN_IF_ERROR(CheckLength("error", request.error()));
  if (request.has_checkpoint()) RETURN_IF_ERROR(CheckCheckpointRef(request.checkpoint()));
  return absl::OkStatus();
}

// Stores what the report carries and moves the plan on past each epoch it finishes.
// Resent rows and events (a group replaying buffered reports) are stored once and make
// no history entry.
absl::Status Coordinator::StoreReport(v1::Job& job, const v1::ReportProgressRequest& request) {
  if (request.has_progress()) *job.mutable_progress() = request.progress();
  // The latest report knows the newest checkpoint: reports of one attempt come in order.
  // A rollout's or generate's reference is its source's checkpoint, set at submission.
  if (request.has_checkpoint() && !job.has_rollout() && !job.has_generate()) {
    *job.mutable_checkpoint() = request.checkpoint();
  }
  const int64_t now = NowUnixMs();
  for (const v1::EpochMetrics& row : request.epochs()) {
    ASSIGN_OR_RETURN(bool changed, store_->PutEpoch(job.id(), row));
    if (!changed) continue;
    v1::JobEvent event;
    event.set_job_id(job.id());
    event.set_unix_ms(now);
    *event.mutable_epoch() = row;
    RETURN_IF_ERROR(store_->AppendEvent(event).status());
  }
  for (const v1::StragglerEvent& straggler : request.stragglers()) {
    ASSIGN_OR_RETURN(bool added, store_->AddStraggler(job.id(), straggler));
    if (!added) continue;
    v1::JobEvent event;
    event.set_job_id(job.id());
    event.set_unix_ms(now);
    *event.mutable_straggler() = straggler;
    RETURN_IF_ERROR(store_->AppendEvent(event).status());
  }
  if (request.epochs_size() > 0) {
    ASSIGN_OR_RETURN(std::vector<v1::EpochMetrics> stored, store_->Epochs(job.id()));
    job.set_epochs_reported(static_cast<int32_t>(stored.size()));
  }
  job.set_updated_unix_ms(now);
  return absl::OkStatus();
}

absl::Status Coordinator::FinishOnGroup(v1::Job& job, const GroupRecord& group,
                                        const v1::ReportProgressRequest& request, GroupRecord& finished) {
  GroupRecord updated = group;
  updated.group.set_state(v1::GROUP_STATE_IDLE);
  updated.group.clear_job_id();
  RETURN_IF_ERROR(SaveGroup(updated));
  const std::string on = job.group_id();
  job.clear_group_id();
  job.clear_plan();
  if (request.final_state() == v1::JOB_STATE_FAILED) {
    job.set_error(request.error().empty() ? "the worker group reported a failure without a message" : request.error());
    RETURN_IF_ERROR(Transition(job, v1::JOB_STATE_FAILED, absl::StrCat("failed on ", on, ": ", job.error())));
  } else if (request.final_state() == v1::JOB_STATE_QUEUED) {
    RETURN_IF_ERROR(Requeue(job, absl::StrCat(on, " released it (stopping)")));
  } else {
    const std::string ended = absl::StrCat(JobStateName(request.final_state()), " on ", on);
    RETURN_IF_ERROR(Transition(job, request.final_state(), ended));
  }
  finished = std::move(updated);
  return absl::OkStatus();
}

absl::StatusOr<v1::ReportProgressResponse> Coordinator::ReportProgress(const v1::ReportProgressRequest& request) {
  RETURN_IF_ERROR(CheckReportShape(request));
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(GroupRecord * group, FindGroup(request.group_id()));
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(request.job_id()));
  const bool active = job.state() == v1::JOB_STATE_RUNNING || job.state() == v1::JOB_STATE_CANCELLING;
  if (!active || job.group_id() != request.group_id() || job.attempts() != request.attempt()) {
    return absl::AbortedError(absl::StrCat("job ", job.id(), " attempt ", request.attempt(), " is no longer held by ",
                                           request.group_id(), " (the job is ", JobStateName(job.state()),
                                           ", attempt ", job.attempts(), "); drop it"));
  }
  Renew(group->group.id());
  ASSIGN_OR_RETURN(ResolvedSpec spec, ResolvedFor(job));
  RETURN_IF_ERROR(CheckReportNumbers(request, ReportScope{spec, group->group.world_size(), group->group.id()}));

  v1::ReportProgressResponse response;
  response.set_lease_seconds(options_.lease_seconds);
  std::optional<GroupRecord> finished;
  // Progress alone is repeated by the next report: it need not wait for the disk. Rows,
  // events, checkpoints and the end of a job are synced.
  const bool progress_only = request.epochs_size() == 0 && request.stragglers_size() == 0 &&
                             !request.has_checkpoint() && request.final_state() == v1::JOB_STATE_UNSPECIFIED;
  RETURN_IF_ERROR(Commit(
      [&]() -> absl::Status {
    RETURN_IF_ERROR(StoreReport(job, request));
    if (request.final_state() != v1::JOB_STATE_UNSPECIFIED) return FinishOnGroup(job, *group, request, finished.emplace());
    const std::vector<v1::RankTiming> timings(request.rank_timings().begin(), request.rank_timings().end());
    for (const v1::EpochMetrics& row : request.epochs()) {
      if (row.batch_size() != job.plan().batch_size() || row.epoch() != job.plan().epoch()) continue;
      std::optional<v1::ShardPlan> next = planner_.NextPlan(spec, job.plan(), timings);
      if (!next) break;
      *job.mutable_plan() = *next;
      *response.mutable_next_plan() = *next;
    }
    RETURN_IF_ERROR(store_->UpdateJob(job, job.state()));  // a report changes no state
    Touch(job);
    return absl::OkStatus();
      },
      progress_only ? Durability::kRelaxed : Durability::kSynced));
  if (finished) *group = *std::move(finished);
  response.set_cancel(job.state() == v1::JOB_STATE_CANCELLING);
  return response;
}

}  // namespace gantry
