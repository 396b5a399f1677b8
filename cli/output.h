// What `gantry` prints: tables for people, one JSON document (or one per line, for
// streams) for scripts. JSON keys are the .proto field names, so a script reads `id`,
// `state`, `epochs` exactly as gantry/v1/*.proto spells them; every field is present;
// numbers are JSON numbers (64-bit integers too, unlike the proto3 JSON mapping, since
// none of ours come near 2^53), enums their names, wrapper fields their value or null.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include <grpcpp/support/status.h>

#include "absl/status/statusor.h"
#include "cli/connection.h"
#include "gantry/v1/coordinator.pb.h"
#include "nlohmann/json.hpp"
#include "report/proto_json.h"

namespace gantry::cli {

// The JSON shape is shared with the coordinator's HTTP endpoints (report/proto_json.h).
using ::gantry::DumpJson;
using ::gantry::ToJsonValue;
// ToJsonValue on one line.
std::string ToJson(const google::protobuf::Message& message);

// Text from the coordinator (a job's name, an error, a host), safe to print in a table:
// control characters and escape sequences shown escaped (EscapeForTerminal), so a name
// cannot rewrite the terminal or forge a row.
std::string Shown(absl::string_view text);

// Local time "2026-11-22 07:12:45", or "-" for 0.
std::string FormatTime(int64_t unix_ms);

// The table, then one line per job that waits for a reason (Job.waiting_reason).
std::string JobsTable(const std::vector<v1::Job>& jobs);
// "job-2 (row 2): its stored record cannot be read (REASON); ..." for stderr.
std::string UnreadableJobText(const v1::UnreadableJob& bad);
std::string JobStatusText(const v1::Job& job);
std::string GroupsTable(const v1::ListGroupsResponse& groups);

// Prints the failure ("gantry: <message>" on stderr; with json also
// {"error": {"code": ..., "message": ...}} on stdout) and returns the exit code.
int Fail(const grpc::Status& status, bool json);
int Fail(const absl::Status& status, bool json);
// Fail() for a call to the coordinator, with a hint on how to reach it when it is
// unavailable.
int FailCall(const Connection& client, const grpc::Status& status);

}  // namespace gantry::cli
