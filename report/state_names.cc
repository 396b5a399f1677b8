#include "report/state_names.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {
namespace {

struct NamedJobState {
  v1::JobState state;
  const char* name;
};

constexpr NamedJobState kJobStateNames[] = {
    {v1::JOB_STATE_QUEUED, "queued"},       {v1::JOB_STATE_RUNNING, "running"},
    {v1::JOB_STATE_CANCELLING, "cancelling"}, {v1::JOB_STATE_SUCCEEDED, "succeeded"},
    {v1::JOB_STATE_FAILED, "failed"},       {v1::JOB_STATE_CANCELLED, "cancelled"},
};

constexpr std::array<v1::JobState, std::size(kJobStateNames)> kJobStates = [] {
  std::array<v1::JobState, std::size(kJobStateNames)> states{};
  for (size_t i = 0; i < states.size(); ++i) states[i] = kJobStateNames[i].state;
  return states;
}();

struct NamedGroupState {
  v1::GroupState state;
  const char* name;
};

constexpr NamedGroupState kGroupStateNames[] = {
    {v1::GROUP_STATE_IDLE, "idle"}, {v1::GROUP_STATE_BUSY, "busy"}, {v1::GROUP_STATE_LOST, "lost"}};

constexpr std::array<v1::GroupState, std::size(kGroupStateNames)> kGroupStates = [] {
  std::array<v1::GroupState, std::size(kGroupStateNames)> states{};
  for (size_t i = 0; i < states.size(); ++i) states[i] = kGroupStateNames[i].state;
  return states;
}();

constexpr char kUnspecified[] = "unspecified";

}  // namespace

std::span<const v1::JobState> JobStates() { return kJobStates; }

std::string JobStateName(v1::JobState state) {
  for (const NamedJobState& named : kJobStateNames) {
    if (named.state == state) return named.name;
  }
  return kUnspecified;
}

absl::StatusOr<v1::JobState> ParseJobState(absl::string_view name) {
  for (const NamedJobState& named : kJobStateNames) {
    if (named.name == name) return named.state;
  }
  return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a job state (", JobStateNameList(), ")"));
}

std::string JobStateNameList() {
  return absl::StrJoin(kJobStateNames, ", ",
                       [](std::string* out, const NamedJobState& named) { out->append(named.name); });
}

std::span<const v1::GroupState> GroupStates() { return kGroupStates; }

std::string GroupStateName(v1::GroupState state) {
  for (const NamedGroupState& named : kGroupStateNames) {
    if (named.state == state) return named.name;
  }
  return kUnspecified;
}

}  // namespace gantry
