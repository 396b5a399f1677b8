// gantry.v1 messages as JSON, one shape for every reader: `gantry --json` (cli/) and
// the coordinator's HTTP endpoints (coordinator/http/monitor_api.h) print the same documents.
// Keys are the .proto field names; every field is present; numbers are JSON numbers
// (64-bit integers too, unlike the proto3 JSON mapping, since none of ours come near
// 2^53); enums are their names; wrapper fields their value or null.
#pragma once

#include <string>

#include "gantry/v1/coordinator.pb.h"
#include "nlohmann/json.hpp"

namespace gantry {

nlohmann::json ToJsonValue(const google::protobuf::Message& message);

// {"job": {...}, "epochs": [...], "summary": [per batch size: total and per-epoch
// seconds, samples/s, all-reduce share, change vs the smallest batch], "stragglers":
// [...]}: `gantry --json report` and GET /api/jobs/ID.
nlohmann::json JobReportJsonValue(const v1::JobReport& report);

// `j` as JSON text (indented by `indent` spaces, or on one line for -1). Control
// characters come out as \u escapes; a byte that is not UTF-8 (a server's error text
// can hold anything) is replaced by U+FFFD instead of throwing.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace gantry
