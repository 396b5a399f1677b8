// The series of the coordinator's /metrics, as one table (metrics_series.cc): each
// family's name, type, help and the function that adds its samples from a snapshot of
// the coordinator's state. Families print in table order, a family's samples in job
// (or group, or state) order; a family with no samples still prints its HELP and TYPE.
// The names, labels and help texts are a contract with dashboards and alerts
// (tests/coordinator/metrics_golden_test.cc holds them to the byte).
#pragma once

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/jobs/coordinator.h"
#include "common/prometheus_text.h"

namespace gantry {

// What /metrics shows, read through the Coordinator's own methods.
struct MetricsSnapshot {
  std::map<v1::JobState, int64_t> jobs_by_state;
  v1::ListGroupsResponse groups;
  // The active jobs (running, then cancelling, each in submission order), so their
  // series end with them. A job that ended between the listing and its report is left out.
  std::vector<v1::JobReport> active;
};

absl::StatusOr<MetricsSnapshot> TakeMetricsSnapshot(Coordinator& core);

// Every family of the table, with its samples from `snapshot`.
void WriteMetricsSeries(const MetricsSnapshot& snapshot, PrometheusText& out);

}  // namespace gantry
