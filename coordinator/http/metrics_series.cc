#include "coordinator/http/metrics_series.h"

#include <cmath>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/jobs/job_outlook.h"
#include "report/energy_source.h"
#include "report/state_names.h"

namespace gantry {
namespace {

using Type = PrometheusText::Type;
using Row = v1::EpochMetrics;

struct Series {
  const char* name;
  Type type;
  const char* help;
  std::function<void(const MetricsSnapshot&, PrometheusText&)> add;
};

// --- what the per-job series read from a job's report ---

MetricLabels JobAndBatch(const v1::Job& job, int64_t batch_size) {
  return {{"job_id", job.id()}, {"batch_size", absl::StrCat(batch_size)}};
}

// The newest finished epoch (rows are in sweep order, so the last one), if any.
const Row* NewestEpoch(const v1::JobReport& report) {
  return report.epochs().empty() ? nullptr : &report.epochs(report.epochs_size() - 1);
}

// Whether the epoch has a Kernel Inception Distance (unset when it was not scored so, as
// in a judge's run or a row from a worker that predates the field).
bool HasKid(const Row& row) { return row.has_quality_kid() && std::isfinite(row.quality_kid().value()); }

// Whether the epoch was scored (quality_fd is -1 when it was not; a row from a worker that
// predates the quality columns has every field 0): by the judge (a softmax's top class
// probability is never 0) or by the random features (a KID).
bool Scored(const Row& row) { return row.quality_fd() >= 0 && (row.quality_confidence() > 0 || HasKid(row)); }

// The newest scored epoch (rows are in sweep order), if any.
const Row* NewestScored(const v1::JobReport& report) {
  for (int i = report.epochs_size() - 1; i >= 0; --i) {
    if (Scored(report.epochs(i))) return &report.epochs(i);
  }
  return nullptr;
}

// The newest epoch with a KID, if any.
const Row* NewestWithKid(const v1::JobReport& report) {
  for (int i = report.epochs_size() - 1; i >= 0; --i) {
    if (HasKid(report.epochs(i))) return &report.epochs(i);
  }
  return nullptr;
}

// The energy of all finished epochs, and whether any epoch's figure is an estimate.
struct EnergyTotal {
  double joules = 0;
  bool estimated = false;
};

EnergyTotal TotalEnergy(const v1::JobReport& report) {
  EnergyTotal total;
  for (const Row& row : report.epochs()) {
    total.joules += row.energy_j();
    total.estimated = total.estimated || (row.energy_j() > 0 && row.energy_estimated() != 0);
  }
  return total;
}

// The labels of the newest finished epoch's energy figures: where they come from
// (measured or estimate) and the meter; unset when that epoch has no figure (energy_j
// 0: the worker had neither), or no epoch has one.
std::optional<MetricLabels> NewestEnergyLabels(const v1::JobReport& report) {
  const Row* row = NewestEpoch(report);
  if (TotalEnergy(report).joules <= 0 || row == nullptr || row->energy_j() <= 0) return std::nullopt;
  MetricLabels labels = JobAndBatch(report.job(), row->batch_size());
  labels.emplace_back("source", row->energy_estimated() != 0 ? "estimate" : "measured");
  const EnergySource meter = EnergySourceOf(row->energy_source(), row->energy_estimated());
  labels.emplace_back("meter", EnergySourceName(static_cast<int>(meter)));
  return labels;
}

// --- the shapes of the per-job series: each returns the function of a table row ---

using AddSamples = std::function<void(const MetricsSnapshot&, PrometheusText&)>;

// One sample per active job from its report, or none where `sample` adds none.
AddSamples PerJob(std::function<void(const v1::JobReport&, PrometheusText&)> sample) {
  return [sample = std::move(sample)](const MetricsSnapshot& snapshot, PrometheusText& out) {
    for (const v1::JobReport& report : snapshot.active) sample(report, out);
  };
}

// A figure of the job's latest progress report, labelled with its batch size.
AddSamples LatestProgress(double (*value)(const v1::Progress&)) {
  return PerJob([value](const v1::JobReport& report, PrometheusText& out) {
    const v1::Job& job = report.job();
    if (job.has_progress()) out.Sample(JobAndBatch(job, job.progress().batch_size()), value(job.progress()));
  });
}

// A figure of the job's outlook (progress fraction, ETA), where it has one.
AddSamples Outlook(std::optional<double> (*value)(const JobOutlook&)) {
  return PerJob([value](const v1::JobReport& report, PrometheusText& out) {
    const std::optional<JobOutlook> outlook = OutlookOf(report.job());
    if (!outlook) return;
    if (const std::optional<double> v = value(*outlook)) out.Sample({{"job_id", report.job().id()}}, *v);
  });
}

// A figure of a chosen epoch row (`pick`: the newest, the newest scored), labelled with
// its batch size.
AddSamples EpochFigure(const Row* (*pick)(const v1::JobReport&), double (*value)(const Row&)) {
  return PerJob([pick, value](const v1::JobReport& report, PrometheusText& out) {
    if (const Row* row = pick(report)) out.Sample(JobAndBatch(report.job(), row->batch_size()), value(*row));
  });
}

// The generator's and the discriminator's figure of the job's epochs, labelled
// network="g" and "d", once it has finished an epoch.
AddSamples PerNetwork(double (*g)(const v1::JobReport&), double (*d)(const v1::JobReport&)) {
  return PerJob([g, d](const v1::JobReport& report, PrometheusText& out) {
    if (report.epochs().empty()) return;
    out.Sample({{"job_id", report.job().id()}, {"network", "g"}}, g(report));
    out.Sample({{"job_id", report.job().id()}, {"network", "d"}}, d(report));
  });
}

// A figure of the newest finished epoch's energy, labelled by where it comes from.
AddSamples NewestEnergy(double (*value)(const Row&)) {
  return PerJob([value](const v1::JobReport& report, PrometheusText& out) {
    const std::optional<MetricLabels> labels = NewestEnergyLabels(report);
    if (labels) out.Sample(*labels, value(*NewestEpoch(report)));
  });
}

double SkippedG(const v1::JobReport& report) {
  int64_t skipped = 0;
  for (const Row& row : report.epochs()) skipped += row.skipped_steps_g();
  return static_cast<double>(skipped);
}

double SkippedD(const v1::JobReport& report) {
  int64_t skipped = 0;
  for (const Row& row : report.epochs()) skipped += row.skipped_steps_d();
  return static_cast<double>(skipped);
}

// --- the coordinator-wide series ---

void JobsByState(const MetricsSnapshot& snapshot, PrometheusText& out) {
  for (v1::JobState state : JobStates()) {
    const auto it = snapshot.jobs_by_state.find(state);
    const int64_t jobs = it == snapshot.jobs_by_state.end() ? 0 : it->second;
    out.Sample({{"state", JobStateName(state)}}, static_cast<double>(jobs));
  }
}

// Every state a sample, zero or not; by name (std::map), the order /metrics has always had.
void GroupsByState(const MetricsSnapshot& snapshot, PrometheusText& out) {
  std::map<std::string, int> by_state;
  for (v1::GroupState state : GroupStates()) by_state[GroupStateName(state)] = 0;
  for (const v1::Group& g : snapshot.groups.groups()) ++by_state[GroupStateName(g.state())];
  for (const auto& [state, n] : by_state) out.Sample({{"state", state}}, n);
}

void GroupRanks(const MetricsSnapshot& snapshot, PrometheusText& out) {
  for (const v1::Group& g : snapshot.groups.groups()) {
    out.Sample({{"group_id", g.id()}, {"name", g.name()}, {"state", GroupStateName(g.state())}}, g.world_size());
  }
}

void GroupHeartbeats(const MetricsSnapshot& snapshot, PrometheusText& out) {
  for (const v1::Group& g : snapshot.groups.groups()) out.Sample({{"group_id", g.id()}}, g.seconds_since_heartbeat());
}

void JobInfo(const v1::JobReport& report, PrometheusText& out) {
  const v1::Job& job = report.job();
  out.Sample({{"job_id", job.id()}, {"name", job.name()}, {"state", JobStateName(job.state())},
              {"group_id", job.group_id()}},
             1);
}

void StragglersByRank(const v1::JobReport& report, PrometheusText& out) {
  std::map<int, int64_t> by_rank;
  for (const v1::StragglerEvent& e : report.stragglers()) ++by_rank[e.rank()];
  for (const auto& [rank, count] : by_rank) {
    out.Sample({{"job_id", report.job().id()}, {"rank", absl::StrCat(rank)}}, static_cast<double>(count));
  }
}

void EnergyOfTheJob(const v1::JobReport& report, PrometheusText& out) {
  const EnergyTotal total = TotalEnergy(report);
  if (total.joules <= 0) return;
  out.Sample({{"job_id", report.job().id()}, {"source", total.estimated ? "estimate" : "measured"}}, total.joules);
}

// The table. The per-job series cover the active jobs only, so they end with their jobs.
const std::vector<Series>& AllSeries() {
  static const std::vector<Series> kSeries = {
      {"gantry_jobs", Type::kGauge, "Jobs in the store, by state.", JobsByState},
      {"gantry_groups", Type::kGauge, "Registered worker groups, by state.", GroupsByState},
      {"gantry_group_ranks", Type::kGauge, "Ranks (MPI processes) of each registered worker group.", GroupRanks},
      {"gantry_group_seconds_since_heartbeat", Type::kGauge,
       "Seconds since each worker group's latest call (it loses its job past the lease).", GroupHeartbeats},
      {"gantry_job_info", Type::kGauge, "1 for each active job, with its name, state and group.", PerJob(JobInfo)},
      {"gantry_job_progress_ratio", Type::kGauge,
       "Fraction of an active job's samples done (estimated across a sweep).",
       Outlook([](const JobOutlook& o) -> std::optional<double> { return o.fraction_done; })},
      {"gantry_job_eta_seconds", Type::kGauge,
       "Estimated seconds until an active job ends, at its current samples/s.",
       Outlook([](const JobOutlook& o) { return o.eta_seconds; })},
      {"gantry_job_samples_per_second", Type::kGauge,
       "Recent training throughput of an active job (its latest report).",
       LatestProgress([](const v1::Progress& p) { return p.samples_per_s(); })},
      {"gantry_job_d_loss", Type::kGauge, "Discriminator loss of an active job's latest report.",
       LatestProgress([](const v1::Progress& p) { return p.d_loss(); })},
      {"gantry_job_g_loss", Type::kGauge, "Generator loss of an active job's latest report.",
       LatestProgress([](const v1::Progress& p) { return p.g_loss(); })},
      {"gantry_job_epoch_seconds", Type::kGauge, "Wall time of an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return r.seconds(); })},
      {"gantry_job_epoch_samples_per_second", Type::kGauge,
       "Steady-state samples/s of an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return r.samples_per_s(); })},
      {"gantry_job_step_p50_seconds", Type::kGauge, "Median step time of an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return r.step_p50_ms() / 1000; })},
      {"gantry_job_step_p99_seconds", Type::kGauge,
       "99th percentile step time of an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return r.step_p99_ms() / 1000; })},
      {"gantry_job_allreduce_share", Type::kGauge,
       "Share of step time spent waiting in all-reduce in an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return r.allreduce_share(); })},
      {"gantry_job_straggler_flags", Type::kGauge, "Straggler flags raised in an active job's newest finished epoch.",
       EpochFigure(NewestEpoch, [](const Row& r) { return static_cast<double>(r.straggler_flags()); })},
      {"gantry_job_loss_scale", Type::kGauge,
       "Loss scale at the end of an active job's newest finished epoch (1: none).",
       PerNetwork([](const v1::JobReport& r) { return NewestEpoch(r)->loss_scale_g(); },
                  [](const v1::JobReport& r) { return NewestEpoch(r)->loss_scale_d(); })},
      {"gantry_job_skipped_steps", Type::kGauge,
       "Updates skipped on inf/NaN gradients over an active job's finished epochs.", PerNetwork(SkippedG, SkippedD)},
      {"gantry_job_straggler_events", Type::kGauge, "Straggler events stored for an active job, by rank.",
       PerJob(StragglersByRank)},
      {"gantry_job_quality_frechet_distance", Type::kGauge,
       "Frechet distance of the judge's features of an active job's newest scored samples to the test set's "
       "(--quality; lower is better).",
       EpochFigure(NewestScored, [](const Row& r) { return r.quality_fd(); })},
      {"gantry_job_quality_kernel_inception_distance", Type::kGauge,
       "Kernel Inception Distance of the random-network features of an active job's newest samples that have one "
       "to the reference images' (the label-free score; lower is better, about 0 at a match, may dip below 0).",
       EpochFigure(NewestWithKid, [](const Row& r) { return r.quality_kid().value(); })},
      {"gantry_job_quality_class_entropy_nats", Type::kGauge,
       "Mean per-sample class entropy of an active job's newest scored samples (lower: more recognisable).",
       EpochFigure(NewestScored, [](const Row& r) { return r.quality_class_entropy(); })},
      {"gantry_job_quality_marginal_entropy_nats", Type::kGauge,
       "Entropy of the mean class distribution of an active job's newest scored samples (ln 10 = 2.30: all classes "
       "alike).",
       EpochFigure(NewestScored, [](const Row& r) { return r.quality_marginal_entropy(); })},
      {"gantry_job_quality_confidence", Type::kGauge,
       "Mean top class probability the judge gives an active job's newest scored samples.",
       EpochFigure(NewestScored, [](const Row& r) { return r.quality_confidence(); })},
      {"gantry_job_epoch_energy_joules", Type::kGauge,
       "Energy of an active job's newest finished epoch (source: measured or estimate; meter: rapl, nvml or "
       "estimate).",
       NewestEnergy([](const Row& r) { return r.energy_j(); })},
      {"gantry_job_epoch_energy_joules_per_sample", Type::kGauge,
       "Energy per training sample of an active job's newest finished epoch.",
       NewestEnergy([](const Row& r) { return r.energy_j_per_sample(); })},
      {"gantry_job_energy_joules", Type::kGauge,
       "Energy of an active job's finished epochs, summed (source: estimate when any epoch's figure is one).",
       PerJob(EnergyOfTheJob)},
  };
  return kSeries;
}

// The reports of the jobs in `state`, page by page.
absl::Status AddReportsOfJobsIn(Coordinator& core, v1::JobState state, std::vector<v1::JobReport>& reports) {
  std::string token;
  do {
    v1::ListJobsRequest request;
    request.set_state(state);
    request.set_page_size(1000);
    request.set_page_token(token);
    ASSIGN_OR_RETURN(v1::ListJobsResponse page, core.ListJobs(request));
    for (const v1::Job& job : page.jobs()) {
      absl::StatusOr<v1::JobReport> report = core.GetJobReport(job.id());
      if (report.ok()) reports.push_back(*std::move(report));  // else it ended and is gone: nothing to show
    }
    token = page.next_page_token();
  } while (!token.empty());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MetricsSnapshot> TakeMetricsSnapshot(Coordinator& core) {
  MetricsSnapshot snapshot;
  ASSIGN_OR_RETURN(snapshot.jobs_by_state, core.CountJobsByState());
  snapshot.groups = core.ListGroups();
  for (v1::JobState state : {v1::JOB_STATE_RUNNING, v1::JOB_STATE_CANCELLING}) {
    RETURN_IF_ERROR(AddReportsOfJobsIn(core, state, snapshot.active));
  }
  return snapshot;
}

void WriteMetricsSeries(const MetricsSnapshot& snapshot, PrometheusText& out) {
  for (const Series& series : AllSeries()) {
    out.Family(series.name, series.type, series.help);
    series.add(snapshot, out);
  }
}

}  // namespace gantry
