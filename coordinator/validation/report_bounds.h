// What a worker group may report about the job it runs, number by number. The
// coordinator stores these figures, prints them (`gantry watch`, `gantry report`), plots
// them (the dashboard, /metrics) and plans with them (rank timings), so a value no run
// produces is refused before anything is stored: any NaN or infinity (a loss, a time, a
// ratio), a rank outside the group, a batch size or epoch outside the job's sweep, a
// negative count or time. INVALID_ARGUMENT naming the field ("stragglers[0].rank: 99
// is not a rank of group-1's 2"); a legitimate worker never sends such a value (it ends
// a run whose loss is not finite itself).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "coordinator/validation/spec_validator.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry {

struct ReportScope {
  const ResolvedSpec& spec;  // of the job reported on
  int world_size = 1;        // of the group that runs it
  std::string group_id;
};

absl::Status CheckReportNumbers(const v1::ReportProgressRequest& request, const ReportScope& scope);

// Every float and double field of `message`, in nested and repeated messages too, is
// finite; else INVALID_ARGUMENT naming `path` + the field ("epochs[2].d_loss").
absl::Status CheckFiniteFields(const google::protobuf::Message& message, const std::string& path);

}  // namespace gantry
