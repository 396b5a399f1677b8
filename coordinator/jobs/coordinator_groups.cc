// Coordinator: the worker groups' side: registration, the long poll for work,
// heartbeats, lease expiry and recovery after a restart. Progress reports are in
// coordinator_reports.cc.
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/jobs/scheduler.h"
#include "coordinator/store/stored_records.h"
#include "spdlog/spdlog.h"

namespace gantry {

double Coordinator::AcquireWaitCap() const {
  return std::min(options_.max_acquire_wait_seconds, options_.lease_seconds / 2);
}

void Coordinator::Renew(const std::string& group_id) {
  const int64_t now = monotonic_.NowNanos();
  leases_.Renew(group_id, now);
  groups_[group_id].last_seen_nanos = now;
}

absl::StatusOr<Coordinator::GroupRecord*> Coordinator::FindGroup(const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) {
    return absl::NotFoundError(absl::StrCat("no group '", group_id, "'; register the group again"));
  }
  return &it->second;
}

absl::Status Coordinator::SaveGroup(const GroupRecord& record) { return store_->PutGroup(record.number, record.group); }

absl::Status Coordinator::CommitGroup(GroupRecord& record, const GroupRecord& updated) {
  RETURN_IF_ERROR(Commit([&] { return SaveGroup(updated); }));
  record = updated;
  return absl::OkStatus();
}

Coordinator::GroupRecord Coordinator::Returned(const GroupRecord& lost) {
  GroupRecord updated = lost;
  updated.group.set_state(v1::GROUP_STATE_IDLE);
  return updated;
}

absl::StatusOr<v1::RegisterGroupResponse> Coordinator::RegisterGroup(const v1::RegisterGroupRequest& request) {
  if (request.world_size() < 1 || request.world_size() > RequestBounds::kMaxWorldSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("world_size: ", request.world_size(), " is not in [1, ", RequestBounds::kMaxWorldSize, "]"));
  }
  if (request.hosts_size() > request.world_size() || request.devices_size() > request.world_size()) {
    return absl::InvalidArgumentError("hosts, devices: at most one entry per rank");
  }
  for (const auto* list : {&request.hosts(), &request.devices()}) {
    for (const std::string& entry : *list) {
      if (entry.size() > RequestBounds::kMaxNameChars) {
        return absl::InvalidArgumentError(
            absl::StrCat("hosts, devices: entry longer than ", RequestBounds::kMaxNameChars, " characters"));
      }
    }
  }
  if (request.name().size() > RequestBounds::kMaxNameChars) {
    return absl::InvalidArgumentError(absl::StrCat("name: longer than ", RequestBounds::kMaxNameChars, " characters"));
  }
  // `gantry groups` prints these on other people's terminals (and a job's history names
  // its group): a newline or an escape sequence in them would rewrite the screen.
  RETURN_IF_ERROR(CheckPrintableField("name", request.name(), "a group name"));
  for (int i = 0; i < request.hosts_size(); ++i) {
    RETURN_IF_ERROR(CheckPrintableField(absl::StrCat("hosts[", i, "]"), request.hosts(i), "a host name"));
  }
  for (int i = 0; i < request.devices_size(); ++i) {
    RETURN_IF_ERROR(CheckPrintableField(absl::StrCat("devices[", i, "]"), request.devices(i), "a device name"));
  }
  absl::MutexLock lock(&mu_);
  GroupRecord record;
  RETURN_IF_ERROR(Commit([&]() -> absl::Status {
    ASSIGN_OR_RETURN(record.number, store_->NextGroupNumber());
    record.group.set_id(GroupId(record.number));
    record.group.set_name(request.name());
    record.group.set_world_size(request.world_size());
    *record.group.mutable_hosts() = request.hosts();
    *record.group.mutable_devices() = request.devices();
    record.group.set_state(v1::GROUP_STATE_IDLE);
    record.group.set_registered_unix_ms(NowUnixMs());
    return SaveGroup(record);
  }));
  groups_[record.group.id()] = record;
  Renew(record.group.id());
  v1::RegisterGroupResponse response;
  response.set_group_id(record.group.id());
  response.set_lease_seconds(options_.lease_seconds);
  return response;
}

absl::StatusOr<std::optional<v1::AcquireJobResponse>> Coordinator::TryAssign(GroupRecord& group) {
  // The choice is made on the queue in memory; only the chosen job is read.
  std::vector<QueuedJob> candidates;
  candidates.reserve(queued_.size());
  for (const auto& [number, queued] : queued_) candidates.push_back(queued);
  const std::vector<std::string> devices(group.group.devices().begin(), group.group.devices().end());
  std::optional<size_t> pick =
      PickJob(candidates, GroupShape{.world_size = group.group.world_size(), .gpus = AllDevicesAreGpus(devices)});
  if (!pick) return std::nullopt;
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(candidates[*pick].id));
  ASSIGN_OR_RETURN(ResolvedSpec spec, ResolvedFor(job));
  job.set_attempts(job.attempts() + 1);
  job.set_group_id(group.group.id());
  job.set_started_unix_ms(NowUnixMs());
  const v1::CheckpointRef& checkpoint = job.checkpoint();
  // A rollout or a generate trains nothing: no plan (its checkpoint is its source's).
  if (spec.trains()) {
    *job.mutable_plan() = checkpoint.run_step() > 0
                              ? planner_.ResumePlan(spec, group.group.world_size(), checkpoint.batch_size(),
                                                    checkpoint.epoch())
                              : planner_.FirstPlan(spec, group.group.world_size());
  }
  GroupRecord updated = group;
  updated.group.set_state(v1::GROUP_STATE_BUSY);
  updated.group.set_job_id(job.id());
  RETURN_IF_ERROR(Commit([&]() -> absl::Status {
    RETURN_IF_ERROR(SaveGroup(updated));
    return Transition(job, v1::JOB_STATE_RUNNING,
                      absl::StrCat("acquired by ", group.group.id(), " (attempt ", job.attempts(), " of ",
                                   job.max_attempts(), ")"));
  }));
  group = updated;
  v1::AcquireJobResponse response;
  *response.mutable_plan() = job.plan();
  *response.mutable_job() = std::move(job);
  response.set_lease_seconds(options_.lease_seconds);
  return response;
}

absl::StatusOr<v1::AcquireJobResponse> Coordinator::AcquireJob(const v1::AcquireJobRequest& request) {
  if (!(request.wait_seconds() >= 0)) return absl::InvalidArgumentError("wait_seconds: must be >= 0");
  const absl::Time deadline = absl::Now() + absl::Seconds(std::min(request.wait_seconds(), AcquireWaitCap()));
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(GroupRecord * group, FindGroup(request.group_id()));
  Renew(group->group.id());
  if (!group->group.job_id().empty()) {
    // The group asks again while holding a job: our reply was lost. Hand it the same one.
    ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(group->group.job_id()));
    v1::AcquireJobResponse response;
    *response.mutable_plan() = job.plan();
    *response.mutable_job() = std::move(job);
    response.set_lease_seconds(options_.lease_seconds);
    return response;
  }
  if (group->group.state() == v1::GROUP_STATE_LOST) RETURN_IF_ERROR(CommitGroup(*group, Returned(*group)));
  const std::string group_id = group->group.id();
  while (!shutting_down_) {
    const uint64_t seen = queue_version_;
    ASSIGN_OR_RETURN(std::optional<v1::AcquireJobResponse> assigned, TryAssign(*group));
    if (assigned) return *std::move(assigned);
    // Wakes only when a job is queued (or on shutdown), not on every report.
    auto queued = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shutting_down_ || queue_version_ != seen; };
    const bool woken = mu_.AwaitWithDeadline(absl::Condition(&queued), deadline);
    ASSIGN_OR_RETURN(group, FindGroup(group_id));  // the lock was released while waiting
    if (!woken) break;
  }
  Renew(group_id);
  v1::AcquireJobResponse empty;
  empty.set_lease_seconds(options_.lease_seconds);
  return empty;
}

absl::StatusOr<v1::HeartbeatResponse> Coordinator::Heartbeat(const v1::HeartbeatRequest& request) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(GroupRecord * group, FindGroup(request.group_id()));
  Renew(group->group.id());
  if (group->group.state() == v1::GROUP_STATE_LOST) RETURN_IF_ERROR(CommitGroup(*group, Returned(*group)));
  v1::HeartbeatResponse response;
  response.set_lease_seconds(options_.lease_seconds);
  response.set_job_id(group->group.job_id());
  if (!group->group.job_id().empty()) {
    ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(group->group.job_id()));
    response.set_cancel(job.state() == v1::JOB_STATE_CANCELLING);
  }
  return response;
}

absl::Status Coordinator::LoseGroup(GroupRecord& group) {
  const std::string why = absl::StrFormat("%s sent no heartbeat for %.1f s", group.group.id(),
                                          (monotonic_.NowNanos() - group.last_seen_nanos) * 1e-9);
  GroupRecord updated = group;
  updated.group.set_state(v1::GROUP_STATE_LOST);
  updated.group.clear_job_id();
  RETURN_IF_ERROR(Commit([&]() -> absl::Status {
    RETURN_IF_ERROR(SaveGroup(updated));
    if (group.group.job_id().empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(group.group.job_id()));
    if (job.group_id() != group.group.id() || IsTerminal(job.state())) return absl::OkStatus();
    job.clear_group_id();
    job.clear_plan();
    return Requeue(job, why);
  }));
  group = updated;
  return absl::OkStatus();
}

absl::Status Coordinator::Requeue(v1::Job& job, const std::string& why) {
  if (job.state() == v1::JOB_STATE_CANCELLING) return Transition(job, v1::JOB_STATE_CANCELLED, why);
  if (job.attempts() >= job.max_attempts()) {
    job.set_error(absl::StrCat("lost its worker group on all ", job.max_attempts(), " attempts; last: ", why));
    return Transition(job, v1::JOB_STATE_FAILED, job.error());
  }
  return Transition(job, v1::JOB_STATE_QUEUED,
                    absl::StrCat(why, "; requeued after attempt ", job.attempts(), " of ", job.max_attempts()));
}

int Coordinator::ExpireLeases() {
  absl::MutexLock lock(&mu_);
  int lost = 0;
  for (const std::string& id : leases_.TakeExpired(monotonic_.NowNanos())) {
    auto it = groups_.find(id);
    if (it == groups_.end() || it->second.group.state() == v1::GROUP_STATE_LOST) continue;
    if (absl::Status s = LoseGroup(it->second); !s.ok()) {
      leases_.Renew(id, monotonic_.NowNanos());  // try again at the next sweep
      continue;
    }
    ++lost;
  }
  return lost;
}

v1::ListGroupsResponse Coordinator::ListGroups() {
  absl::MutexLock lock(&mu_);
  v1::ListGroupsResponse response;
  const int64_t now = monotonic_.NowNanos();
  for (const auto& [id, record] : groups_) {
    v1::Group* g = response.add_groups();
    *g = record.group;
    g->set_seconds_since_heartbeat((now - record.last_seen_nanos) * 1e-9);
  }
  return response;
}

absl::Status Coordinator::Recover() {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(RecoverGroups());
  return RecoverJobs();
}

absl::Status Coordinator::RecoverGroups() {
  ASSIGN_OR_RETURN(JobStore::GroupRows rows, store_->Groups());
  for (const UnreadableRecord& bad : rows.unreadable) {
    spdlog::warn("--db: the record of group row {} ({}) cannot be read ({}); left out: its pool registers again",
                 bad.number, EscapeForTerminal(bad.id), bad.reason);
  }
  for (JobStore::StoredGroup& stored : rows.groups) {
    GroupRecord record;
    record.number = stored.number;
    record.group = std::move(stored.group);
    const std::string id = record.group.id();
    const bool lost = record.group.state() == v1::GROUP_STATE_LOST;
    groups_[id] = std::move(record);
    if (!lost) Renew(id);
  }
  return absl::OkStatus();
}

absl::Status Coordinator::RecoverJobs() {
  ASSIGN_OR_RETURN(JobStore::JobRows active,
                   store_->JobsInStates({v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_CANCELLING}));
  for (const UnreadableRecord& bad : active.unreadable) RETURN_IF_ERROR(Quarantine(bad));
  for (v1::Job& job : active.jobs) {
    if (job.state() != v1::JOB_STATE_QUEUED && groups_.count(job.group_id()) == 0) {
      // Its group was left out: nobody would report on it, or lose it.
      job.clear_group_id();
      job.clear_plan();
      RETURN_IF_ERROR(Commit([&] { return Requeue(job, "the record of its worker group cannot be read"); }));
      continue;
    }
    // A running job stays with its group; only a queued one that can no longer start fails.
    absl::StatusOr<ResolvedSpec> spec = ResolvedFor(job);
    if (spec.ok() || job.state() != v1::JOB_STATE_QUEUED) {
      Apply(job);  // the queue and the job versions in memory
      continue;
    }
    job.set_error(absl::StrCat("no longer valid on this coordinator: ", spec.status().message()));
    RETURN_IF_ERROR(Commit([&] { return Transition(job, v1::JOB_STATE_FAILED, job.error()); }));
  }
  return ReleaseGroupsOfSetAsideJobs(active.jobs);
}

// A group whose job was set aside would be answered DATA_LOSS on every heartbeat and
// report: it is idle again (its heartbeat says it holds no job, so it drops the job).
absl::Status Coordinator::ReleaseGroupsOfSetAsideJobs(const std::vector<v1::Job>& active) {
  std::set<std::string> held;
  for (const v1::Job& job : active) held.insert(job.id());
  for (auto& [id, record] : groups_) {
    if (record.group.job_id().empty() || held.count(record.group.job_id()) > 0) continue;
    spdlog::warn("--db: {} held {}, whose record was set aside; the group is idle again", id,
                 EscapeForTerminal(record.group.job_id()));
    GroupRecord updated = record;
    updated.group.clear_job_id();
    if (updated.group.state() == v1::GROUP_STATE_BUSY) updated.group.set_state(v1::GROUP_STATE_IDLE);
    RETURN_IF_ERROR(CommitGroup(record, updated));
  }
  return absl::OkStatus();
}

absl::Status Coordinator::Quarantine(const UnreadableRecord& bad) {
  RETURN_IF_ERROR(Commit([&] { return store_->QuarantineJob(bad.number, bad.reason); }));
  spdlog::warn("--db: the record of job row {} ({}) cannot be read ({}); set aside, the other jobs are served "
               "(`gantry jobs` lists it)",
               bad.number, EscapeForTerminal(bad.id), bad.reason);
  return absl::OkStatus();
}

}  // namespace gantry
