// `gantry report`: a job's epoch rows as the worker's own files show them. The table is
// the worker's timing.md (report/timing_report.h) and the CSV its epochs.csv, made
// by the same functions, so a report matches the run folder of the run it came from.
#pragma once

#include <string>
#include <vector>

#include "gantry/v1/coordinator.pb.h"
#include "report/epoch_metrics.h"

namespace gantry::cli {

// timing.md, then the straggler events, if any.
std::string ReportMarkdown(const v1::JobReport& report);
// epochs.csv: its header and one line per row.
std::string ReportCsv(const v1::JobReport& report);
// {"job": {...}, "epochs": [...], "summary": [per batch size], "stragglers": [...]}.
std::string ReportJson(const v1::JobReport& report);

}  // namespace gantry::cli
