#include "coordinator/validation/report_bounds.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gantry {
namespace {

using google::protobuf::FieldDescriptor;

std::string Field(const std::string& path, absl::string_view name) {
  return path.empty() ? std::string(name) : absl::StrCat(path, ".", name);
}

absl::Status CheckFiniteValue(const std::string& field, double value) {
  if (std::isfinite(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not a finite number"));
}

// One field of `message` (every element when repeated).
absl::Status CheckFiniteField(const google::protobuf::Message& message, const FieldDescriptor& field,
                              const std::string& name) {
  const google::protobuf::Reflection& r = *message.GetReflection();
  const bool repeated = field.is_repeated();
  const int count = repeated ? r.FieldSize(message, &field) : 1;
  for (int i = 0; i < count; ++i) {
    const std::string at = repeated ? absl::StrCat(name, "[", i, "]") : name;
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        RETURN_IF_ERROR(CheckFiniteValue(at, repeated ? r.GetRepeatedDouble(message, &field, i)
                                                      : r.GetDouble(message, &field)));
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        RETURN_IF_ERROR(CheckFiniteValue(at, repeated ? r.GetRepeatedFloat(message, &field, i)
                                                      : r.GetFloat(message, &field)));
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        RETURN_IF_ERROR(CheckFiniteFields(
            repeated ? r.GetRepeatedMessage(message, &field, i) : r.GetMessage(message, &field), at));
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status AtLeast(const std::string& field, double value, double least) {
  if (value >= least) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is below ", least));
}

absl::Status NotNegative(const std::string& path, std::initializer_list<std::pair<const char*, double>> values) {
  for (const auto& [name, value] : values) RETURN_IF_ERROR(AtLeast(Field(path, name), value, 0));
  return absl::OkStatus();
}

absl::Status CheckBatchAndEpoch(const std::string& path, int64_t batch_size, int64_t epoch, const ResolvedSpec& spec) {
  const auto& sweep = spec.batch_sizes;
  if (std::find(sweep.begin(), sweep.end(), batch_size) == sweep.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Field(path, "batch_size"), ": ", batch_size, " is not a batch size of the job"));
  }
  if (epoch < 1 || epoch > spec.epochs) {
    return absl::InvalidArgumentError(
        absl::StrCat(Field(path, "epoch"), ": ", epoch, " is not in [1, ", spec.epochs, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckRank(const std::string& path, int64_t rank, const ReportScope& scope) {
  if (rank >= 0 && rank < scope.world_size) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Field(path, "rank"), ": ", rank, " is not a rank of ",
                                                 scope.group_id, "'s ", scope.world_size));
}

absl::Status CheckProgress(const v1::Progress& p, const ReportScope& scope) {
  RETURN_IF_ERROR(NotNegative("progress", {{"epoch", p.epoch()},
                                           {"step", p.step()},
                                           {"steps_per_epoch", p.steps_per_epoch()},
                                           {"global_step", p.global_step()},
                                           {"samples_per_s", p.samples_per_s()}}));
  // A rollout reports batch size 0; a training run one of its sweep's.
  const auto& sweep = scope.spec.batch_sizes;
  if (p.batch_size() != 0 && std::find(sweep.begin(), sweep.end(), p.batch_size()) == sweep.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress.batch_size: ", p.batch_size(), " is not a batch size of the job"));
  }
  return absl::OkStatus();
}

absl::Status CheckEpochRow(const std::string& path, const v1::EpochMetrics& row, const ResolvedSpec& spec) {
  RETURN_IF_ERROR(CheckBatchAndEpoch(path, row.batch_size(), row.epoch(), spec));
  return NotNegative(path, {{"seconds", row.seconds()},
                            {"steady_step_ms", row.steady_step_ms()},
                            {"samples_per_s", row.samples_per_s()},
                            {"step_p50_ms", row.step_p50_ms()},
                            {"step_p99_ms", row.step_p99_ms()},
                            {"steps", static_cast<double>(row.steps())}});
}

absl::Status CheckStraggler(const std::string& path, const v1::StragglerEvent& e, const ReportScope& scope) {
  RETURN_IF_ERROR(CheckBatchAndEpoch(path, e.batch_size(), e.epoch(), scope.spec));
  RETURN_IF_ERROR(CheckRank(path, e.rank(), scope));
  return NotNegative(path, {{"step", static_cast<double>(e.step())},
                            {"window_steps", e.window_steps()},
                            {"rank_compute_ms", e.rank_compute_ms()},
                            {"median_compute_ms", e.median_compute_ms()},
                            {"ratio", e.ratio()}});
}

absl::Status CheckRankTiming(const std::string& path, const v1::RankTiming& t, const ReportScope& scope) {
  RETURN_IF_ERROR(CheckRank(path, t.rank(), scope));
  return NotNegative(path, {{"share", static_cast<double>(t.share())},
                            {"window_steps", t.window_steps()},
                            {"compute_ms", t.compute_ms()},
                            {"data_wait_ms", t.data_wait_ms()},
                            {"allreduce_ms", t.allreduce_ms()}});
}

}  // namespace

absl::Status CheckFiniteFields(const google::protobuf::Message& message, const std::string& path) {
  const google::protobuf::Descriptor& descriptor = *message.GetDescriptor();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor& field = *descriptor.field(i);
    RETURN_IF_ERROR(CheckFiniteField(message, field, Field(path, field.name())));
  }
  return absl::OkStatus();
}

absl::Status CheckReportNumbers(const v1::ReportProgressRequest& request, const ReportScope& scope) {
  RETURN_IF_ERROR(CheckFiniteFields(request, ""));
  if (request.has_progress()) RETURN_IF_ERROR(CheckProgress(request.progress(), scope));
  for (int i = 0; i < request.epochs_size(); ++i) {
    RETURN_IF_ERROR(CheckEpochRow(absl::StrCat("epochs[", i, "]"), request.epochs(i), scope.spec));
  }
  for (int i = 0; i < request.stragglers_size(); ++i) {
    RETURN_IF_ERROR(CheckStraggler(absl::StrCat("stragglers[", i, "]"), request.stragglers(i), scope));
  }
  for (int i = 0; i < request.rank_timings_size(); ++i) {
    RETURN_IF_ERROR(CheckRankTiming(absl::StrCat("rank_timings[", i, "]"), request.rank_timings(i), scope));
  }
  return absl::OkStatus();
}

}  // namespace gantry
