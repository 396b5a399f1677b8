// Coordinator: the users' side (submit, list, cancel, report, history) and the shared
// helpers. The worker groups' side is in coordinator_groups.cc.
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "common/printable_text.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/store/stored_records.h"
#include "report/state_names.h"
#include "runspec/generate_spec_check.h"
#include "runspec/rollout_spec_check.h"
#include "runspec/run_spec_settings.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {
constexpr int kDefaultPageSize = 100;
// Ended jobs whose change counter is kept, so a watcher that read one just before it
// ended still sees it move.
constexpr size_t kMaxEndedVersions = 1024;

// What the scheduler knows of a queued job.
QueuedJob Queued(const v1::Job& job, const ResolvedSpec& spec) {
  if (!spec.trains()) return QueuedJob{.id = job.id(), .world_size = job.world_size(), .any_batch = true};
  return QueuedJob{job.id(), job.world_size(), *std::min_element(spec.batch_sizes.begin(), spec.batch_sizes.end()),
                   spec.needs_gpus, spec.min_share};
}

// "rollout of job-3: case-2" for a rollout submitted without a name.
std::string RolloutName(const v1::RolloutSpec& rollout) {
  return absl::StrCat("rollout of ", rollout.source_job_id(), ": ", RolloutCaseName(rollout.case_dir()));
}
}  // namespace

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED || state == v1::JOB_STATE_CANCELLED;
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

absl::Status Coordinator::Commit(const std::function<absl::Status()>& body, Durability durability) {
  touched_.clear();
  committed_logs_.clear();
  const absl::Status status = store_->Transaction(body, durability);
  std::vector<std::pair<v1::Job, std::optional<ResolvedSpec>>> touched = std::move(touched_);
  touched_.clear();
  std::vector<std::string> logs = std::move(committed_logs_);
  committed_logs_.clear();
  if (!status.ok()) return status;
  for (const std::string& line : logs) spdlog::info("{}", line);
  for (auto& [job, resolved] : touched) {
    if (resolved) resolved_[job.id()] = std::move(*resolved);
  }
  for (const auto& [job, resolved] : touched) Apply(job);
  return absl::OkStatus();
}

void Coordinator::Touch(const v1::Job& job, const ResolvedSpec* resolved) {
  touched_.emplace_back(job, resolved ? std::optional<ResolvedSpec>(*resolved) : std::nullopt);
}

void Coordinator::Apply(const v1::Job& job) {
  // The store hands out only jobs whose id is their row's (stored_records.h).
  const std::optional<int64_t> parsed = JobNumberOf(job.id());
  if (!parsed) return;
  const int64_t number = *parsed;
  job_versions_[job.id()] = ++versions_;
  if (job.state() == v1::JOB_STATE_QUEUED) {
    // A queued job whose spec no longer resolves (its data root went away) cannot be
    // handed out; it stays queued until a restart fails it with the reason (Recover).
    if (absl::StatusOr<ResolvedSpec> spec = ResolvedFor(job); spec.ok()) {
      queued_[number] = Queued(job, *spec);
      ++queue_version_;
    }
    return;
  }
  queued_.erase(number);
  if (IsTerminal(job.state())) {
    resolved_.erase(job.id());
    ended_.push_back(job.id());
    if (ended_.size() > kMaxEndedVersions) {
      job_versions_.erase(ended_.front());
      ended_.pop_front();
    }
  }
}

uint64_t Coordinator::JobVersionLocked(const std::string& job_id) const {
  auto it = job_versions_.find(job_id);
  return it == job_versions_.end() ? 0 : it->second;
}

uint64_t Coordinator::JobVersion(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  return JobVersionLocked(job_id);
}

void Coordinator::WaitForJobChange(const std::string& job_id, uint64_t seen, double timeout_seconds) {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shutting_down_ || JobVersionLocked(job_id) != seen; };
  mu_.AwaitWithDeadline(absl::Condition(&changed), absl::Now() + absl::Seconds(timeout_seconds));
}

void Coordinator::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;  // every waiter's condition includes it
}

bool Coordinator::shutting_down() {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

absl::StatusOr<ResolvedSpec> Coordinator::ResolvedFor(const v1::Job& job) {
  auto it = resolved_.find(job.id());
  if (it != resolved_.end()) return it->second;
  ASSIGN_OR_RETURN(ResolvedSpec resolved,
                   job.has_generate() ? validator_.ResolveGenerate(job.generate())
                   : job.has_rollout() ? validator_.ResolveRollout(job.rollout())
                                       : validator_.Resolve(job.spec()));
  resolved_[job.id()] = resolved;
  return resolved;
}

absl::Status Coordinator::Transition(v1::Job& job, v1::JobState state, const std::string& message) {
  const int64_t now = NowUnixMs();
  const v1::JobState from = job.state();  // as read: the store's compare-and-set checks it
  job.set_state(state);
  job.set_updated_unix_ms(now);
  if (IsTerminal(state)) job.set_finished_unix_ms(now);
  RETURN_IF_ERROR(store_->UpdateJob(job, from));
  v1::JobEvent event;
  event.set_job_id(job.id());
  event.set_unix_ms(now);
  v1::StateChange* change = event.mutable_state();
  change->set_state(state);
  change->set_attempt(job.attempts());
  change->set_group_id(job.group_id());
  change->set_message(message);
  RETURN_IF_ERROR(store_->AppendEvent(event).status());
  Touch(job);
  committed_logs_.push_back(absl::StrCat(job.id(), ": ", JobStateName(state), " (", message, ")"));
  return absl::OkStatus();
}

namespace {
GroupShape ShapeOf(const v1::Group& group) {
  const std::vector<std::string> devices(group.devices().begin(), group.devices().end());
  return GroupShape{.world_size = group.world_size(), .gpus = AllDevicesAreGpus(devices)};
}
}  // namespace

std::optional<std::string> Coordinator::NoFitReason(const QueuedJob& job) const {
  std::vector<std::string> registered;
  for (const auto& [id, record] : groups_) {
    if (record.group.state() == v1::GROUP_STATE_LOST) continue;
    if (GroupFits(job, ShapeOf(record.group))) return std::nullopt;
    registered.push_back(absl::StrCat(id, ": ", record.group.world_size(), " rank(s)"));
  }
  if (registered.empty()) return std::nullopt;
  return absl::StrCat("no registered group fits it (", absl::StrJoin(registered, ", "), "): it waits for ",
                      FitNeeds(job));
}

std::string Coordinator::SubmittedMessage(const QueuedJob& job) const {
  const std::optional<std::string> no_fit = NoFitReason(job);
  return no_fit ? absl::StrCat("submitted; ", *no_fit) : "submitted";
}

std::string Coordinator::WaitingReason(const v1::Job& job) {
  if (job.state() != v1::JOB_STATE_QUEUED) return "";
  const absl::StatusOr<ResolvedSpec> spec = ResolvedFor(job);
  if (!spec.ok()) {
    return absl::StrCat("its spec no longer resolves on this coordinator (", spec.status().message(),
                        "); it fails at the next restart, or cancel it");
  }
  const QueuedJob queued = Queued(job, *spec);
  if (std::optional<std::string> no_fit = NoFitReason(queued)) return *no_fit;
  bool any = false;
  for (const auto& [id, record] : groups_) {
    if (record.group.state() == v1::GROUP_STATE_LOST) continue;
    any = true;
    if (record.group.state() == v1::GROUP_STATE_IDLE && GroupFits(queued, ShapeOf(record.group))) return "";
  }
  if (!any) return "no worker group is registered (or every one was lost): start one with `gantry-worker serve`";
  return absl::StrCat("every group that fits it is busy; it waits for ", FitNeeds(queued));
}

absl::StatusOr<Coordinator::FinishedRun> Coordinator::FinishedSource(const std::string& id, const char* field,
                                                                     const char* verb, const char* done) {
  absl::StatusOr<v1::Job> source = store_->GetJob(id);
  if (absl::IsNotFound(source.status())) {
    return absl::NotFoundError(
        absl::StrCat(field, ".source_job_id: no job '", id, "' to ", verb, " (see `gantry jobs`)"));
  }
  RETURN_IF_ERROR(source.status());
  if (source->has_rollout() || source->has_generate()) {
    const std::string& its =
        source->has_rollout() ? source->rollout().source_job_id() : source->generate().source_job_id();
    return absl::InvalidArgumentError(absl::StrCat(field, ".source_job_id: ", id, " is a ",
                                                   source->has_rollout() ? "rollout" : "generate",
                                                   " itself; give the training job it ",
                                                   source->has_rollout() ? "rolled out" : "sampled", ", ", its));
  }
  if (source->state() != v1::JOB_STATE_SUCCEEDED) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ".source_job_id: ", id, " is ", JobStateName(source->state()),
                     "; only a run that succeeded can be ", done,
                     IsTerminal(source->state()) ? "" : absl::StrCat(" (wait for it: gantry watch ", id, ")")));
  }
  const v1::CheckpointRef& checkpoint = source->checkpoint();
  if (checkpoint.run_folder().empty() || checkpoint.run_step() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(field, ".source_job_id: ", id,
                                                      " reported no checkpoint, so there is no model to ", verb));
  }
  // The source's spec resolved when it was submitted; its settings alone say what it trained.
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(RunSpecToSettings(source->spec()));
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".source_job_id: the spec of ", id,
                                                   " does not resolve on this coordinator: ",
                                                   config.status().message()));
  }
  return FinishedRun{*std::move(source), *std::move(config)};
}

absl::Status Coordinator::PrepareRollout(const v1::RolloutSpec& rollout, v1::Job& job) {
  const std::string& id = rollout.source_job_id();
  ASSIGN_OR_RETURN(const FinishedRun source, FinishedSource(id, "rollout", "roll out", "rolled out"));
  RETURN_IF_ERROR(CheckRolloutFitsRun(rollout, source.config, id));
  *job.mutable_spec() = source.job.spec();
  *job.mutable_checkpoint() = source.job.checkpoint();
  *job.mutable_rollout() = rollout;
  if (job.name().empty()) job.set_name(RolloutName(rollout));
  return absl::OkStatus();
}

absl::Status Coordinator::PrepareGenerate(const v1::GenerateSpec& generate, v1::Job& job) {
  const std::string& id = generate.source_job_id();
  ASSIGN_OR_RETURN(const FinishedRun source, FinishedSource(id, "generate", "sample", "sampled"));
  RETURN_IF_ERROR(CheckGenerateFitsRun(generate, source.config, id));
  *job.mutable_spec() = source.job.spec();
  *job.mutable_checkpoint() = source.job.checkpoint();
  *job.mutable_generate() = generate;
  if (job.generate().name().empty()) job.mutable_generate()->set_name(job.id());
  if (job.name().empty()) job.set_name(absl::StrCat("samples of ", id, ": generate-", job.generate().name()));
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> Coordinator::SubmitJob(const v1::SubmitJobRequest& request) {
  const bool rollout = request.has_rollout(), generate = request.has_generate();
  ASSIGN_OR_RETURN(ResolvedSpec resolved, generate  ? validator_.CheckGenerateSubmit(request)
                                          : rollout ? validator_.CheckRolloutSubmit(request)
                                                    : validator_.CheckSubmit(request));
  absl::MutexLock lock(&mu_);
  v1::Job job;
  job.set_name(request.name());
  if (rollout) {
    RETURN_IF_ERROR(PrepareRollout(request.rollout(), job));
  } else if (!generate) {
    *job.mutable_spec() = request.spec();
  }
  RETURN_IF_ERROR(Commit([&]() -> absl::Status {
    ASSIGN_OR_RETURN(int64_t number, store_->NextJobNumber());
    job.set_id(JobId(number));
    // A generate's default name is its own id, known only now.
    if (generate) RETURN_IF_ERROR(PrepareGenerate(request.generate(), job));
    job.set_world_size(request.world_size());
    job.set_max_attempts(request.max_attempts() > 0 ? request.max_attempts() : options_.default_max_attempts);
    job.set_created_unix_ms(NowUnixMs());
    RETURN_IF_ERROR(store_->InsertJob(number, job));
    std::string message = SubmittedMessage(Queued(job, resolved));
    // Where to look for the outputs, in the history `gantry watch` prints.
    if (rollout) {
      message.insert(std::string("submitted").size(),
                     absl::StrCat(": rolls out ", job.rollout().source_job_id(), " into ", job.checkpoint().host(), ":",
                                  RolloutJobOutputFolder(job.checkpoint().run_folder(), job.rollout().case_dir(),
                                                         job.id())));
    }
    if (generate) {
      message.insert(std::string("submitted").size(),
                     absl::StrCat(": samples ", job.generate().source_job_id(), " into ", job.checkpoint().host(), ":",
                                  GenerateOutputFolder(job.checkpoint().run_folder(), job.generate().name())));
    }
    RETURN_IF_ERROR(Transition(job, v1::JOB_STATE_QUEUED, message));
    Touch(job, &resolved);
    return absl::OkStatus();
  }));
  job.set_waiting_reason(WaitingReason(job));
  return job;
}

absl::StatusOr<v1::Job> Coordinator::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(job_id));
  job.set_waiting_reason(WaitingReason(job));
  return job;
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
  for (v1::Job& job : page.jobs) {
    job.set_waiting_reason(WaitingReason(job));
    *response.add_jobs() = std::move(job);
  }
  for (const UnreadableRecord& bad : page.unreadable) {
    // As stored, the id may hold any bytes: escaped, so the reply is valid UTF-8.
    v1::UnreadableJob* out = response.add_unreadable_jobs();
    out->set_job_id(EscapeForTerminal(bad.id));
    out->set_number(bad.number);
    out->set_reason(EscapeForTerminal(bad.reason));
  }
  if (page.more) response.set_next_page_token(absl::StrCat(page.last_number));
  return response;
}

absl::StatusOr<v1::Job> Coordinator::CancelJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(job_id));
  if (IsTerminal(job.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " has already ended (", JobStateName(job.state()), "); nothing to cancel"));
  }
  if (job.state() == v1::JOB_STATE_CANCELLING) return job;
  const bool queued = job.state() == v1::JOB_STATE_QUEUED;
  RETURN_IF_ERROR(Commit([&] {
    return queued ? Transition(job, v1::JOB_STATE_CANCELLED, "cancelled while queued")
                  : Transition(job, v1::JOB_STATE_CANCELLING,
                               absl::StrCat("cancel asked; ", job.group_id(), " stops at its next report"));
  }));
  return job;
}

absl::StatusOr<v1::JobReport> Coordinator::GetJobReport(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  v1::JobReport report;
  ASSIGN_OR_RETURN(*report.mutable_job(), store_->GetJob(job_id));
  report.mutable_job()->set_waiting_reason(WaitingReason(report.job()));
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

absl::StatusOr<std::map<v1::JobState, int64_t>> Coordinator::CountJobsByState() {
  absl::MutexLock lock(&mu_);
  return store_->CountJobsByState();
}

absl::StatusOr<std::vector<v1::JobEvent>> Coordinator::EventsAfter(const std::string& job_id, int64_t after_sequence,
                                                                   int limit) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(store_->GetJob(job_id).status());
  return store_->EventsAfter(job_id, after_sequence, limit);
}

}  // namespace gantry
