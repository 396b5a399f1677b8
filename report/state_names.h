// The names of job and group states, written once for everything users see: `gantry`'s
// tables and its --state flag, the coordinator's log lines and error messages,
// /metrics labels and /api/jobs?state=. The names are a contract (scripts, dashboards
// and alerts match them): change them only with every reader.
#pragma once

#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gantry/v1/job.pb.h"

namespace gantry {

// Every state a job can be in, in lifecycle order: queued, running, cancelling,
// succeeded, failed, cancelled (not UNSPECIFIED).
std::span<const v1::JobState> JobStates();

// "queued", "running", ...; "unspecified" for JOB_STATE_UNSPECIFIED or a value this
// build does not know.
std::string JobStateName(v1::JobState state);

// The state of that name (one of JobStates()); otherwise INVALID_ARGUMENT
// "'NAME' is not a job state (queued, running, cancelling, succeeded, failed,
// cancelled)", to which the caller prefixes the flag or field that held it.
absl::StatusOr<v1::JobState> ParseJobState(absl::string_view name);

// The names of JobStates(), comma separated: "queued, running, ..., cancelled".
std::string JobStateNameList();

// Every state a group can be in: idle, busy, lost (not UNSPECIFIED).
std::span<const v1::GroupState> GroupStates();

// "idle", "busy", "lost"; "unspecified" for GROUP_STATE_UNSPECIFIED or an unknown value.
std::string GroupStateName(v1::GroupState state);

}  // namespace gantry
