#include "coordinator/store/stored_records.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

constexpr absl::string_view kJobPrefix = "job-";
constexpr absl::string_view kGroupPrefix = "group-";

std::optional<int64_t> NumberAfter(absl::string_view prefix, absl::string_view id) {
  if (!absl::StartsWith(id, prefix)) return std::nullopt;
  const absl::string_view digits = id.substr(prefix.size());
  // 19 digits hold every int64; a leading zero would give two ids one number.
  if (digits.empty() || digits.size() > 19 || digits[0] == '0') return std::nullopt;
  uint64_t value = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');  // < 10^19 < 2^64: no wrap
  }
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(value);
}

// The id as a message may quote it: escaped, and cut short.
std::string Quoted(absl::string_view id) {
  constexpr size_t kShown = 80;
  return absl::StrCat("'", EscapeForTerminal(id.substr(0, kShown)), id.size() > kShown ? "...'" : "'");
}

template <typename Message>
absl::StatusOr<Message> ParseRecord(const std::string& bytes, const char* what) {
  if (bytes.empty()) return absl::DataLossError(absl::StrCat("the ", what, " record is empty"));
  if (bytes.size() > kMaxRecordBytes) {
    return absl::DataLossError(absl::StrCat("the ", what, " record holds ", bytes.size(), " bytes, more than the ",
                                            kMaxRecordBytes, " any record may"));
  }
  Message message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat("the ", what, " record (", bytes.size(), " bytes) is not a ", what,
                                            " message"));
  }
  return message;
}

absl::Status CheckIds(const char* what, const std::string& expected, const std::string& column,
                      const std::string& in_record) {
  if (column != expected) {
    return absl::DataLossError(absl::StrCat("the row's id ", Quoted(column), " is not ", expected));
  }
  if (in_record != expected) {
    return absl::DataLossError(absl::StrCat("the ", what, " record names ", Quoted(in_record), ", not ", expected));
  }
  return absl::OkStatus();
}

}  // namespace

std::string JobId(int64_t number) { return absl::StrCat(kJobPrefix, number); }
std::string GroupId(int64_t number) { return absl::StrCat(kGroupPrefix, number); }
std::optional<int64_t> JobNumberOf(absl::string_view id) { return NumberAfter(kJobPrefix, id); }
std::optional<int64_t> GroupNumberOf(absl::string_view id) { return NumberAfter(kGroupPrefix, id); }

absl::StatusOr<v1::Job> DecodeJobRow(const JobRow& row) {
  absl::StatusOr<v1::Job> job = ParseRecord<v1::Job>(row.record, "job");
  if (!job.ok()) return job.status();
  if (absl::Status ids = CheckIds("job", JobId(row.number), row.id, job->id()); !ids.ok()) return ids;
  if (row.state != job->state() || job->state() == v1::JOB_STATE_UNSPECIFIED ||
      !v1::JobState_IsValid(job->state())) {
    return absl::DataLossError(absl::StrCat("the job record's state ", job->state(), " disagrees with its row's ",
                                            row.state));
  }
  return job;
}

absl::StatusOr<v1::Group> DecodeGroupRow(const GroupRow& row) {
  absl::StatusOr<v1::Group> group = ParseRecord<v1::Group>(row.record, "group");
  if (!group.ok()) return group.status();
  if (absl::Status ids = CheckIds("group", GroupId(row.number), row.id, group->id()); !ids.ok()) return ids;
  return group;
}

}  // namespace gantry
