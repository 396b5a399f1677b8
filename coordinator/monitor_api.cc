#include "coordinator/monitor_api.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/job_outlook.h"
#include "coordinator/prometheus_text.h"
#include "report/energy_source.h"
#include "report/proto_json.h"
#include "report/state_names.h"

namespace gantry {
namespace {

using Type = PrometheusText::Type;

nlohmann::json OutlookJson(const v1::Job& job) {
  const std::optional<JobOutlook> outlook = OutlookOf(job);
  if (!outlook) return nullptr;
  nlohmann::json j = {{"fraction_done", outlook->fraction_done}};
  j["eta_seconds"] = outlook->eta_seconds ? nlohmann::json(*outlook->eta_seconds) : nlohmann::json(nullptr);
  return j;
}

// The `state` parameter of /api/jobs: a state's name, or "" for every state.
absl::StatusOr<v1::JobState> ParseStateParameter(const std::string& name) {
  if (name.empty()) return v1::JOB_STATE_UNSPECIFIED;
  absl::StatusOr<v1::JobState> state = ParseJobState(name);
  if (!state.ok()) return absl::InvalidArgumentError(absl::StrCat("state: ", state.status().message()));
  return state;
}

// Samples of one family, gathered job by job and printed together (the format wants
// a family's samples in one block).
struct Samples {
  void Sample(MetricLabels labels, double value) { items.emplace_back(std::move(labels), value); }
  std::vector<std::pair<MetricLabels, double>> items;
};

struct JobFamilies {
  Samples info, progress, eta, samples, d_loss, g_loss, epoch_seconds, epoch_samples, p50, p99, allreduce, flags,
      loss_scale, skipped, stragglers, quality_fd, quality_class_entropy, quality_marginal_entropy, quality_confidence,
      energy, energy_per_sample, energy_total;
};

// Whether the judge scored this epoch (quality_fd is -1 when it did not; a row from a
// worker that predates the quality columns has every field 0, and a softmax's top class
// probability is never 0).
bool Scored(const v1::EpochMetrics& row) { return row.quality_fd() >= 0 && row.quality_confidence() > 0; }

// The newest scored epoch's figures (rows are in sweep order), labelled with its batch size.
void AddQuality(const v1::JobReport& report, JobFamilies& f) {
  for (int i = report.epochs_size() - 1; i >= 0; --i) {
    const v1::EpochMetrics& row = report.epochs(i);
    if (!Scored(row)) continue;
    const MetricLabels at = {{"job_id", report.job().id()}, {"batch_size", absl::StrCat(row.batch_size())}};
    f.quality_fd.Sample(at, row.quality_fd());
    f.quality_class_entropy.Sample(at, row.quality_class_entropy());
    f.quality_marginal_entropy.Sample(at, row.quality_marginal_entropy());
    f.quality_confidence.Sample(at, row.quality_confidence());
    return;
  }
}

// Energy of the newest finished epoch and of all finished epochs, when measured or
// estimated (energy_j 0: the worker had neither), labelled by where the figure comes from.
void AddEnergy(const v1::JobReport& report, JobFamilies& f) {
  double total = 0;
  bool estimated = false;
  for (const v1::EpochMetrics& row : report.epochs()) {
    total += row.energy_j();
    estimated = estimated || (row.energy_j() > 0 && row.energy_estimated() != 0);
  }
  if (total <= 0) return;
  const v1::EpochMetrics& row = report.epochs(report.epochs_size() - 1);
  const std::string& id = report.job().id();
  if (row.energy_j() > 0) {
    const MetricLabels at = {{"job_id", id},
                             {"batch_size", absl::StrCat(row.batch_size())},
                             {"source", row.energy_estimated() != 0 ? "estimate" : "measured"},
                             {"meter", EnergySourceName(static_cast<int>(
                                           EnergySourceOf(row.energy_source(), row.energy_estimated())))}};
    f.energy.Sample(at, row.energy_j());
    f.energy_per_sample.Sample(at, row.energy_j_per_sample());
  }
  f.energy_total.Sample({{"job_id", id}, {"source", estimated ? "estimate" : "measured"}}, total);
}

void AddJob(const v1::JobReport& report, JobFamilies& f) {
  const v1::Job& job = report.job();
  const MetricLabels id = {{"job_id", job.id()}};
  f.info.Sample({{"job_id", job.id()}, {"name", job.name()}, {"state", JobStateName(job.state())}, {"group_id", job.group_id()}},
                1);
  if (const std::optional<JobOutlook> outlook = OutlookOf(job)) {
    f.progress.Sample(id, outlook->fraction_done);
    if (outlook->eta_seconds) f.eta.Sample(id, *outlook->eta_seconds);
  }
  if (job.has_progress()) {
    const MetricLabels at = {{"job_id", job.id()}, {"batch_size", absl::StrCat(job.progress().batch_size())}};
    f.samples.Sample(at, job.progress().samples_per_s());
    f.d_loss.Sample(at, job.progress().d_loss());
    f.g_loss.Sample(at, job.progress().g_loss());
  }
  int64_t skipped_g = 0, skipped_d = 0;
  for (const v1::EpochMetrics& row : report.epochs()) {
    skipped_g += row.skipped_steps_g();
    skipped_d += row.skipped_steps_d();
  }
  if (report.epochs_size() > 0) {
    // The newest finished epoch (rows are in sweep order, so the last one).
    const v1::EpochMetrics& row = report.epochs(report.epochs_size() - 1);
    const MetricLabels at = {{"job_id", job.id()}, {"batch_size", absl::StrCat(row.batch_size())}};
    f.epoch_seconds.Sample(at, row.seconds());
    f.epoch_samples.Sample(at, row.samples_per_s());
    f.p50.Sample(at, row.step_p50_ms() / 1000);
    f.p99.Sample(at, row.step_p99_ms() / 1000);
    f.allreduce.Sample(at, row.allreduce_share());
    f.flags.Sample(at, static_cast<double>(row.straggler_flags()));
    f.loss_scale.Sample({{"job_id", job.id()}, {"network", "g"}}, row.loss_scale_g());
    f.loss_scale.Sample({{"job_id", job.id()}, {"network", "d"}}, row.loss_scale_d());
    f.skipped.Sample({{"job_id", job.id()}, {"network", "g"}}, static_cast<double>(skipped_g));
    f.skipped.Sample({{"job_id", job.id()}, {"network", "d"}}, static_cast<double>(skipped_d));
  }
  AddQuality(report, f);
  AddEnergy(report, f);
  std::map<int, int64_t> by_rank;
  for (const v1::StragglerEvent& e : report.stragglers()) ++by_rank[e.rank()];
  for (const auto& [rank, count] : by_rank) {
    f.stragglers.Sample({{"job_id", job.id()}, {"rank", absl::StrCat(rank)}}, static_cast<double>(count));
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> MonitorApi::Jobs(const std::string& state, int page_size,
                                                const std::string& page_token) {
  v1::ListJobsRequest request;
  ASSIGN_OR_RETURN(v1::JobState parsed, ParseStateParameter(state));
  request.set_state(parsed);
  request.set_page_size(page_size);
  request.set_page_token(page_token);
  ASSIGN_OR_RETURN(v1::ListJobsResponse response, core_.ListJobs(request));
  nlohmann::json out = ToJsonValue(response);
  for (int i = 0; i < response.jobs_size(); ++i) out["jobs"][i]["outlook"] = OutlookJson(response.jobs(i));
  return out;
}

absl::StatusOr<nlohmann::json> MonitorApi::Job(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::JobReport report, core_.GetJobReport(job_id));
  nlohmann::json out = JobReportJsonValue(report);
  out["outlook"] = OutlookJson(report.job());
  std::map<int, std::pair<int64_t, double>> by_rank;  // rank -> events, largest ratio
  for (const v1::StragglerEvent& e : report.stragglers()) {
    auto& [events, max_ratio] = by_rank[e.rank()];
    ++events;
    max_ratio = std::max(max_ratio, e.ratio());
  }
  out["stragglers_by_rank"] = nlohmann::json::array();
  for (const auto& [rank, summary] : by_rank) {
    out["stragglers_by_rank"].push_back({{"rank", rank}, {"events", summary.first}, {"max_ratio", summary.second}});
  }
  absl::StatusOr<SampleGrid> grid = ReadNewestSampleGrid(report);
  out["sample_grid"] = grid.ok() ? nlohmann::json{{"batch_size", grid->batch_size}, {"epoch", grid->epoch}}
                                 : nlohmann::json(nullptr);
  out["rollout"] = ReadRunFolderFile(report.job().checkpoint().run_folder(), {"rollout.csv"}, kMaxRolloutCsvBytes).ok();
  return out;
}

nlohmann::json MonitorApi::Groups() { return ToJsonValue(core_.ListGroups()); }

absl::StatusOr<SampleGrid> MonitorApi::NewestSampleGrid(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::JobReport report, core_.GetJobReport(job_id));
  return ReadNewestSampleGrid(report);
}

absl::StatusOr<nlohmann::json> MonitorApi::Rollout(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, core_.GetJob(job_id));
  return ReadRolloutCurve(job);
}

absl::StatusOr<std::string> MonitorApi::MetricsText() {
  PrometheusText out;
  using Counts = std::map<v1::JobState, int64_t>;
  ASSIGN_OR_RETURN(Counts counts, core_.CountJobsByState());
  out.Family("gantry_jobs", Type::kGauge, "Jobs in the store, by state.");
  for (v1::JobState state : JobStates()) {
    out.Sample({{"state", JobStateName(state)}}, static_cast<double>(counts.count(state) ? counts[state] : 0));
  }

  const v1::ListGroupsResponse groups = core_.ListGroups();
  std::map<std::string, int> by_state = {{"idle", 0}, {"busy", 0}, {"lost", 0}};
  for (const v1::Group& g : groups.groups()) ++by_state[GroupStateName(g.state())];
  out.Family("gantry_groups", Type::kGauge, "Registered worker groups, by state.");
  for (const auto& [state, n] : by_state) out.Sample({{"state", state}}, n);
  out.Family("gantry_group_ranks", Type::kGauge, "Ranks (MPI processes) of each registered worker group.");
  for (const v1::Group& g : groups.groups()) {
    out.Sample({{"group_id", g.id()}, {"name", g.name()}, {"state", GroupStateName(g.state())}}, g.world_size());
  }
  out.Family("gantry_group_seconds_since_heartbeat", Type::kGauge,
             "Seconds since each worker group's latest call (it loses its job past the lease).");
  for (const v1::Group& g : groups.groups()) out.Sample({{"group_id", g.id()}}, g.seconds_since_heartbeat());

  // Per job: the active ones (running or cancelling), so the series end with their jobs.
  JobFamilies f;
  for (v1::JobState state : {v1::JOB_STATE_RUNNING, v1::JOB_STATE_CANCELLING}) {
    std::string token;
    do {
      v1::ListJobsRequest request;
      request.set_state(state);
      request.set_page_size(1000);
      request.set_page_token(token);
      ASSIGN_OR_RETURN(v1::ListJobsResponse page, core_.ListJobs(request));
      for (const v1::Job& job : page.jobs()) {
        absl::StatusOr<v1::JobReport> report = core_.GetJobReport(job.id());
        if (!report.ok()) continue;  // ended and gone between the two reads: nothing to show
        AddJob(*report, f);
      }
      token = page.next_page_token();
    } while (!token.empty());
  }
  auto write = [&out](const char* name, Type type, const char* help, const Samples& samples) {
    out.Family(name, type, help);
    for (const auto& [labels, value] : samples.items) out.Sample(labels, value);
  };
  write("gantry_job_info", Type::kGauge, "1 for each active job, with its name, state and group.", f.info);
  write("gantry_job_progress_ratio", Type::kGauge, "Fraction of an active job's samples done (estimated across a sweep).",
        f.progress);
  write("gantry_job_eta_seconds", Type::kGauge, "Estimated seconds until an active job ends, at its current samples/s.",
        f.eta);
  write("gantry_job_samples_per_second", Type::kGauge, "Recent training throughput of an active job (its latest report).",
        f.samples);
  write("gantry_job_d_loss", Type::kGauge, "Discriminator loss of an active job's latest report.", f.d_loss);
  write("gantry_job_g_loss", Type::kGauge, "Generator loss of an active job's latest report.", f.g_loss);
  write("gantry_job_epoch_seconds", Type::kGauge, "Wall time of an active job's newest finished epoch.",
        f.epoch_seconds);
  write("gantry_job_epoch_samples_per_second", Type::kGauge,
        "Steady-state samples/s of an active job's newest finished epoch.", f.epoch_samples);
  write("gantry_job_step_p50_seconds", Type::kGauge, "Median step time of an active job's newest finished epoch.", f.p50);
  write("gantry_job_step_p99_seconds", Type::kGauge, "99th percentile step time of an active job's newest finished epoch.",
        f.p99);
  write("gantry_job_allreduce_share", Type::kGauge,
        "Share of step time spent waiting in all-reduce in an active job's newest finished epoch.", f.allreduce);
  write("gantry_job_straggler_flags", Type::kGauge, "Straggler flags raised in an active job's newest finished epoch.",
        f.flags);
  write("gantry_job_loss_scale", Type::kGauge, "Loss scale at the end of an active job's newest finished epoch (1: none).",
        f.loss_scale);
  write("gantry_job_skipped_steps", Type::kGauge,
        "Updates skipped on inf/NaN gradients over an active job's finished epochs.", f.skipped);
  write("gantry_job_straggler_events", Type::kGauge, "Straggler events stored for an active job, by rank.",
        f.stragglers);
  write("gantry_job_quality_frechet_distance", Type::kGauge,
        "Frechet distance of the judge's features of an active job's newest scored samples to the test set's "
        "(--quality; lower is better).",
        f.quality_fd);
  write("gantry_job_quality_class_entropy_nats", Type::kGauge,
        "Mean per-sample class entropy of an active job's newest scored samples (lower: more recognisable).",
        f.quality_class_entropy);
  write("gantry_job_quality_marginal_entropy_nats", Type::kGauge,
        "Entropy of the mean class distribution of an active job's newest scored samples (ln 10 = 2.30: all classes "
        "alike).",
        f.quality_marginal_entropy);
  write("gantry_job_quality_confidence", Type::kGauge,
        "Mean top class probability the judge gives an active job's newest scored samples.", f.quality_confidence);
  write("gantry_job_epoch_energy_joules", Type::kGauge,
        "Energy of an active job's newest finished epoch (source: measured or estimate; meter: rapl, nvml or "
        "estimate).",
        f.energy);
  write("gantry_job_epoch_energy_joules_per_sample", Type::kGauge,
        "Energy per training sample of an active job's newest finished epoch.", f.energy_per_sample);
  write("gantry_job_energy_joules", Type::kGauge,
        "Energy of an active job's finished epochs, summed (source: estimate when any epoch's figure is one).",
        f.energy_total);
  if (rpc_metrics_ != nullptr) rpc_metrics_->Write(out);
  return out.text();
}

}  // namespace gantry
