// The records the job store keeps (sqlite_job_store.h), checked before the coordinator
// trusts them, and the ids the coordinator makes from their row numbers.
//
// A row holds a few columns the store queries (number, id, state) and the serialized
// message. A record is readable when the message parses, is at most kMaxRecordBytes, and
// agrees with its row: the id is the one its number makes ("job-17" for row 17) and, for
// a job, the state column is the record's (valid) state. Anything else (an empty record,
// bytes that are not a message, a row whose columns and record disagree) is damage: the
// caller sets it aside and reports it, naming the row; nothing here throws or aborts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gantry/v1/job.pb.h"

namespace gantry {

// Larger than any record the coordinator writes (a request is at most 4 MiB).
inline constexpr size_t kMaxRecordBytes = 16 << 20;

// "job-17", "group-3".
std::string JobId(int64_t number);
std::string GroupId(int64_t number);
// The number of an id made by JobId / GroupId; nullopt for anything else (another
// prefix, a sign, leading zeros, a number outside 1..2^63-1). No exceptions.
std::optional<int64_t> JobNumberOf(absl::string_view id);
std::optional<int64_t> GroupNumberOf(absl::string_view id);

struct JobRow {
  int64_t number = 0;
  std::string id;
  int64_t state = 0;   // the state column
  std::string record;  // the serialized v1::Job
};

struct GroupRow {
  int64_t number = 0;
  std::string id;
  std::string record;  // the serialized v1::Group
};

// The job of a readable row; DATA_LOSS saying what is wrong with it otherwise (the
// message names no row: the caller adds it).
absl::StatusOr<v1::Job> DecodeJobRow(const JobRow& row);
absl::StatusOr<v1::Group> DecodeGroupRow(const GroupRow& row);

}  // namespace gantry
