#include "worker/serve/job_runner.h"

#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "coordinator/run_spec_settings.h"
#include "spdlog/spdlog.h"
#include "worker/serve/pool_collectives.h"
#include "worker/serve/stop_signals.h"
#include "worker/tensor/backend_registry.h"
#include "worker/train/run_folder.h"
#include "worker/train/run_manifest.h"
#include "worker/train/timing_report.h"
#include "worker/train/train_config.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

// The first agreements of a job wait for every rank to load the data.
constexpr double kStartUpTimeoutSeconds = 600;

JobOutcome Outcome(JobOutcome::Kind kind, std::string message, bool report_failure = false) {
  return JobOutcome{kind, std::move(message), report_failure};
}

// A collective that failed leaves the communicator unusable: the pool must end.
JobOutcome CommFailure(const absl::Status& s) { return Outcome(JobOutcome::kFatal, std::string(s.message())); }

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

// Points the job log at the run folder for the scope of one job.
class JobLogScope {
 public:
  explicit JobLogScope(JobLogSink* sink) : sink_(sink) {}
  ~JobLogScope() {
    if (sink_ != nullptr) sink_->Close();
  }
  void Open(const std::string& path) {
    if (sink_ == nullptr) return;
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
  for (int n = 2; std::filesystem::exists(path); ++n) path = absl::StrCat(base, "-", n);
  return path;
}

JobRunner::JobRunner(Communicator& comm, std::string runs_dir, JobLogSink* log_sink)
    : comm_(comm), runs_dir_(std::move(runs_dir)), log_sink_(log_sink) {}

JobOutcome JobRunner::Run(const v1::AcquireJobResponse& acquired, TrainObserver& observer, JobControl* control) {
  const v1::Job& job = acquired.job();
  CommOptions start_up;
  start_up.timeout_seconds = kStartUpTimeoutSeconds;
  // The same on every rank: the spec and this code are.
  const RawSettings settings = RunSpecToSettings(job.spec());
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(settings);
  if (!config.ok()) {
    return Outcome(JobOutcome::kFailed, absl::StrCat("the spec does not resolve here: ", config.status().message()));
  }

  JobLogScope log(log_sink_);
  std::optional<RunFolder> folder;
  absl::Status folder_status;
  if (is_root()) {
    run_folder_ = JobRunFolderPath(runs_dir_, job.id(), job.attempts());
    config->out = run_folder_;
    absl::StatusOr<RunFolder> created = RunFolder::Create(run_folder_);
    folder_status = created.status();
    if (created.ok()) {
      folder.emplace(*created);
      log.Open(folder->File("log.txt"));
    }
  }
  absl::StatusOr<bool> agreed = EveryRankOk(comm_, folder_status.ok(), start_up);
  if (!agreed.ok()) return CommFailure(agreed.status());
  if (!*agreed) return Outcome(JobOutcome::kFailed, std::string(folder_status.message()));
  if (is_root()) {
    spdlog::info("{} (attempt {} of {}): {} rank(s), run folder {}", job.id(), job.attempts(), job.max_attempts(),
                 comm_.size(), run_folder_);
  }

  const std::string data_dir = EffectiveDataDir(*config);
  absl::StatusOr<const ImageDataset*> data = data_.Get(data_dir, config->limit_images);
  absl::Status ready = data.status();
  Backend& backend = *FindBackend(config->kernels);  // validated by ResolveTrainConfig
  if (is_root() && ready.ok()) {
    ready = folder->WriteRunJson(RunManifestJson(*config, settings, data_dir, (*data)->count, std::string(backend.name()),
                                                 comm_.size(), comm_.backend_name()));
  }
  if (!ready.ok()) spdlog::error("rank {}: {}", comm_.rank(), std::string(ready.message()));
  agreed = EveryRankOk(comm_, ready.ok(), start_up);
  if (!agreed.ok()) return CommFailure(agreed.status());
  if (!*agreed) {
    return Outcome(JobOutcome::kFailed, ready.ok() ? absl::StrCat("another rank could not load ", data_dir,
                                                                  " (see that rank's output)")
                                                   : std::string(ready.message()));
  }

  Trainer trainer(*config, **data, folder ? &*folder : nullptr, comm_, Clock::Real(), backend);
  trainer.set_observer(&observer);
  absl::StatusOr<std::vector<EpochRow>> rows = trainer.Run();
  if (absl::IsCancelled(rows.status())) return StopOutcome(control, rows.status());
  // Trainer::Run's INVALID_ARGUMENT comes from its up-front checks of the batch sizes
  // against the data and the group, which every rank makes alike before any collective.
  if (absl::IsInvalidArgument(rows.status())) return Outcome(JobOutcome::kFailed, std::string(rows.status().message()));
  if (!rows.ok()) {
    return Outcome(JobOutcome::kFatal, std::string(rows.status().message()), !IsCommFailure(rows.status()));
  }
  if (!is_root()) return Outcome(JobOutcome::kSucceeded, "");
  const std::string timing = TimingMarkdown(*rows, comm_.size(), DescribePrecision(config->mixed, comm_.size()));
  if (absl::Status s = WriteFileAtomically(folder->File("timing.md"), timing); !s.ok()) {
    return Outcome(JobOutcome::kFailed, std::string(s.message()));
  }
  spdlog::info("{} done: {} epoch row(s); timing table {}", job.id(), rows->size(), folder->File("timing.md"));
  return Outcome(JobOutcome::kSucceeded, "");
}

}  // namespace gantry
