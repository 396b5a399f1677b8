#include "worker/pool/job_runner.h"

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/host_name.h"
#include "common/status_macros.h"
#include "runspec/rollout_spec_check.h"
#include "runspec/run_spec_settings.h"
#include "spdlog/spdlog.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/comm/broadcast_string.h"
#include "worker/pool/generate_request.h"
#include "worker/pool/rollout_request.h"
#include "worker/pool/stop_signals.h"

namespace gantry {
namespace {

// The first agreements of a job wait for every rank to load the data.
constexpr double kStartUpTimeoutSeconds = 600;
// How long an attempt that continues an earlier one's run folder waits for that
// attempt's process, told by the fence, to stop and let go of the folder.
constexpr double kFolderHandOverSeconds = 60;

JobOutcome Outcome(JobOutcome::Kind kind, std::string message, bool report_failure = false) {
  return JobOutcome{kind, std::move(message), report_failure};
}

// Why the ranks agreed to stop, as rank 0 knows it (other ranks learn what comes next
// from the serve loop's next round).
JobOutcome StopOutcome(JobControl* control, const absl::Status& stopped) {
  const std::string where(stopped.message());
  if (control == nullptr) return Outcome(JobOutcome::kCancelled, where);
  if (control->gone()) return Outcome(JobOutcome::kDropped, control->gone_reason());
  if (StopSignal() != 0) return Outcome(JobOutcome::kInterrupted, where);
  if (control->cancel_requested()) return Outcome(JobOutcome::kCancelled, where);
  return Outcome(JobOutcome::kInterrupted, where + " (another rank was asked to stop)");
}

// Failures of the transport rather than of the job: a rank died or hung. Such a job is
// not failed; the coordinator requeues it when the group's heartbeats stop.
bool IsCommFailure(const absl::Status& s) {
  return absl::IsDeadlineExceeded(s) || absl::IsAborted(s) || absl::IsFailedPrecondition(s);
}

// What the end of RunTrainJob means for the pool.
JobOutcome OutcomeOf(const TrainJobResult& r, JobControl* control) {
  const std::string message(r.status.message());
  // Fenced out of its run folder (a later attempt owns it): whatever failed next, the
  // job is another group's now.
  if (control != nullptr && control->gone()) return Outcome(JobOutcome::kDropped, control->gone_reason());
  switch (r.end) {
    case TrainJobEnd::kTrained:
    case TrainJobEnd::kAlreadyFinished:
      return Outcome(JobOutcome::kSucceeded, "");
    case TrainJobEnd::kRefused:
      // Refused alike on every rank: the job cannot run here, the pool can go on.
      return r.collective_failed ? Outcome(JobOutcome::kFatal, message) : Outcome(JobOutcome::kFailed, message);
    case TrainJobEnd::kFailed:
      break;
  }
  if (absl::IsCancelled(r.status)) return StopOutcome(control, r.status);
  // Trainer::Run's INVALID_ARGUMENT comes from its up-front checks of the batch sizes
  // against the data and the group, which every rank makes alike before any collective.
  if (absl::IsInvalidArgument(r.status)) return Outcome(JobOutcome::kFailed, message);
  return Outcome(JobOutcome::kFatal, message, !IsCommFailure(r.status));
}

// What the end of an inference job (a rollout, a generate) means for the pool.
// `in_collectives`: it failed in the collectives of its compute stage, where the ranks
// may be out of step.
JobOutcome InferenceOutcomeOf(const absl::Status& status, bool collective_failed, bool in_collectives,
                              JobControl* control) {
  if (status.ok()) return Outcome(JobOutcome::kSucceeded, "");
  const std::string message(status.message());
  if (absl::IsCancelled(status)) return StopOutcome(control, status);
  if (collective_failed) return Outcome(JobOutcome::kFatal, message);
  // Refusals before the compute stage and rank 0's writing after it leave the ranks in
  // step; so do the compute stage's up-front INVALID_ARGUMENT checks (a rollout's steps
  // and tiling against the case), which every rank makes alike before any collective.
  if (!in_collectives || absl::IsInvalidArgument(status)) return Outcome(JobOutcome::kFailed, message);
  return Outcome(JobOutcome::kFatal, message, !IsCommFailure(status));
}

bool HoldsCheckpoints(const std::string& run_folder) {
  if (run_folder.empty()) return false;
  const absl::StatusOr<std::vector<CheckpointFile>> files = CheckpointStore(run_folder + "/checkpoints").List();
  return files.ok() && !files->empty();
}

// Points the job log at the run folder for the scope of one job.
class JobLogScope {
 public:
  explicit JobLogScope(JobLogSink* sink) : sink_(sink) {}
  ~JobLogScope() {
    if (sink_ != nullptr) sink_->Close();
  }
  void Open(const std::string& path) {
    if (sink_ == nullptr || path.empty()) return;
    if (absl::Status s = sink_->Open(path); !s.ok()) spdlog::warn("{}", std::string(s.message()));
  }

 private:
  JobLogSink* sink_;
};

}  // namespace

std::string JobRunFolderPath(const std::string& runs_dir, const std::string& job_id, int attempt) {
  const std::string base =
      absl::StrCat(runs_dir, "/", job_id, attempt > 1 ? absl::StrCat(".attempt-", attempt) : std::string());
  std::string path = base;
  std::error_code ec;  // not throwing: anything there, even a link loop, takes the name
  for (int n = 2; std::filesystem::exists(std::filesystem::symlink_status(path, ec)); ++n) {
    path = absl::StrCat(base, "-", n);
  }
  return path;
}

std::string ResumableRunFolder(const std::string& runs_dir, const v1::Job& job, std::string* why_not) {
  if (job.attempts() <= 1) return "";
  const std::string reported = job.checkpoint().run_folder();
  if (HoldsCheckpoints(reported)) return reported;
  const std::string here = absl::StrCat(runs_dir, "/", job.id());
  if (HoldsCheckpoints(here)) return here;
  if (why_not != nullptr) {
    *why_not = reported.empty()
                   ? absl::StrCat("no checkpoint of an earlier attempt in ", here)
                   : absl::StrCat("attempt ", job.attempts() - 1, "'s run folder ", job.checkpoint().host(), ":",
                                  reported, " holds no checkpoint this host can read (keep --runs-dir on storage "
                                  "every group shares to resume across hosts)");
  }
  return "";
}

JobRunner::JobRunner(Communicator& comm, std::string runs_dir, JobLogSink* log_sink)
    : comm_(comm), runs_dir_(std::move(runs_dir)), log_sink_(log_sink) {}

absl::StatusOr<std::string> JobRunner::AgreeOnResume(const v1::Job& job) {
  std::string folder;
  if (is_root()) {
    std::string why_not;
    folder = ResumableRunFolder(runs_dir_, job, &why_not);
    if (folder.empty() && !why_not.empty()) {
      spdlog::warn("{} (attempt {}): {}; starting again from the beginning", job.id(), job.attempts(), why_not);
    }
  }
  CommOptions start_up;
  start_up.timeout_seconds = kStartUpTimeoutSeconds;
  RETURN_IF_ERROR(BroadcastString(comm_, folder, 0, start_up));
  return folder;
}

TrainJobResult JobRunner::Train(const v1::Job& job, RawSettings settings, bool resume, TrainObserver& observer,
                                JobControl* control) {
  JobLogScope log(log_sink_);
  TrainJobRequest request;
  request.settings = std::move(settings);
  request.resume = resume;
  // The attempt fences the run folder: a later attempt that continues it shuts this one out.
  request.claim = RunFolderClaim{
      .token = {.epoch = job.attempts(),
                .holder = absl::StrCat("job ", job.id(), " attempt ", job.attempts(), " on host ", ThisHostName(),
                                       " (pid ", ::getpid(), ")")},
      .lock_wait_seconds = kFolderHandOverSeconds};
  request.observer = &observer;
  request.data = [this](const std::string& dir, int64_t limit, const ImageRequirement& need) {
    return data_.Get(dir, limit, &need);
  };
  TrainJobResult r = RunTrainJob(comm_, request, [&](int rank, const std::string& log_path) {
    if (rank != 0) return;
    log.Open(log_path);
    if (log_path.empty()) return;
    run_folder_ = std::filesystem::path(log_path).parent_path().string();
    spdlog::info("{} (attempt {} of {}): {} rank(s), run folder {}{}", job.id(), job.attempts(), job.max_attempts(),
                 comm_.size(), run_folder_, resume ? ", resuming from its newest checkpoint" : "");
  });
  // Rank 0 reports the job's end; a refusal that is this rank's own (its data folder is
  // missing, say) is only seen here. ABORTED marks another rank's.
  if (!is_root() && r.end == TrainJobEnd::kRefused && !absl::IsAborted(r.status)) {
    spdlog::error("rank {}: {}", comm_.rank(), std::string(r.status.message()));
  }
  if (is_root() && control != nullptr && !run_folder_.empty()) {
    // A write refused by the fence (the periodic check at each step may not have seen the
    // claim yet) ends the job like the check does.
    if (const std::string why = FencedOutReason(run_folder_, job.attempts()); !why.empty()) control->MarkGone(why);
  }
  return r;
}

JobOutcome JobRunner::RollOut(const v1::Job& job, TrainObserver& observer, JobControl* control) {
  RolloutRequest request = RolloutRequestFor(job);
  request.should_stop = [&observer] { return observer.ShouldStop(); };
  // Progress, so the report thread has something to send and brings a cancel back.
  request.on_step = [&observer, steps = request.steps](int64_t step, double tiles_per_second) {
    observer.OnStep(StepProgress{.batch_size = 0, .epoch = 1, .step = step, .steps_in_epoch = steps,
                                 .global_step = step, .samples_per_s = tiles_per_second});
  };
  JobLogScope log(log_sink_);
  if (is_root()) {
    run_folder_ = request.run_dir;
    // The log goes with the outputs, when the run folder is here to hold them.
    const std::string& out = request.out;
    std::error_code ec;
    if (std::filesystem::is_directory(request.run_dir, ec)) {
      std::filesystem::create_directories(out, ec);
      if (!ec) log.Open(out + "/log.txt");
    }
    spdlog::info("{} (attempt {} of {}): rollout of {} ({}) over {} for {} step(s) on {} rank(s), into {}", job.id(),
                 job.attempts(), job.max_attempts(), job.rollout().source_job_id(), request.run_dir, request.case_dir,
                 request.steps, comm_.size(), out);
  }
  RolloutJobEnd end;
  const absl::Status status = RunRolloutJob(comm_, request, &end);
  // A refusal that is this rank's own is only seen here; ABORTED marks another rank's.
  if (!status.ok() && !is_root() && !absl::IsAborted(status) && !absl::IsCancelled(status)) {
    spdlog::error("rank {}: {}", comm_.rank(), std::string(status.message()));
  }
  return InferenceOutcomeOf(status, end.collective_failed, end.stage == RolloutStage::kRollingOut, control);
}

JobOutcome JobRunner::Generate(const v1::Job& job, TrainObserver& observer, JobControl* control) {
  GenerateRequest request = GenerateRequestFor(job);
  // A cancel, SIGTERM or SIGINT is heard between generator calls and between files.
  request.should_stop = [&observer] { return observer.ShouldStop(); };
  if (is_root()) {
    run_folder_ = request.run_dir;
    spdlog::info("{} (attempt {} of {}): samples of {} ({}) on {} rank(s), into {}", job.id(), job.attempts(),
                 job.max_attempts(), job.generate().source_job_id(), request.run_dir, comm_.size(), request.out);
  }
  GenerateJobEnd end;
  const absl::Status status = RunGenerateJob(comm_, request, &end);
  // A refusal that is this rank's own is only seen here; ABORTED marks another rank's.
  if (!status.ok() && !is_root() && !absl::IsAborted(status)) {
    spdlog::error("rank {}: {}", comm_.rank(), std::string(status.message()));
  }
  if (status.ok() && is_root()) spdlog::info("{} done: {} sample(s) in {}", job.id(), end.count, end.out);
  return InferenceOutcomeOf(status, end.collective_failed, end.stage == GenerateStage::kGenerating, control);
}

JobOutcome JobRunner::Run(const v1::AcquireJobResponse& acquired, TrainObserver& observer, JobControl* control) {
  const v1::Job& job = acquired.job();
  if (job.has_rollout()) return RollOut(job, observer, control);
  if (job.has_generate()) return Generate(job, observer, control);
  // The same on every rank: the spec and this code are (rank 0's are the ones used).
  RawSettings settings = RunSpecToSettings(job.spec());
  absl::StatusOr<std::string> resume_from = AgreeOnResume(job);
  if (!resume_from.ok()) return Outcome(JobOutcome::kFatal, std::string(resume_from.status().message()));
  if (!resume_from->empty()) {
    RawSettings resumed = settings;
    resumed["out"] = *resume_from;
    const TrainJobResult r = Train(job, std::move(resumed), /*resume=*/true, observer, control);
    // A refusal is the same on every rank (no usable checkpoint after all, say): start again.
    if (r.end != TrainJobEnd::kRefused || r.collective_failed) return OutcomeOf(r, control);
    if (is_root()) {
      spdlog::warn("{}: cannot resume {}: {}; starting again from the beginning", job.id(), *resume_from,
                   std::string(r.status.message()));
    }
  }
  if (is_root()) settings["out"] = JobRunFolderPath(runs_dir_, job.id(), job.attempts());
  const TrainJobResult r = Train(job, std::move(settings), /*resume=*/false, observer, control);
  if (is_root() && r.end == TrainJobEnd::kTrained) {
    spdlog::info("{} done: {} epoch row(s); timing table {}/timing.md", job.id(), r.rows.size(), run_folder_);
  }
  return OutcomeOf(r, control);
}

}  // namespace gantry
