#include "report/proto_json.h"

#include <optional>

#include "absl/strings/match.h"
#include "report/epoch_row_proto.h"
#include "report/time_to_target.h"
#include "report/timing_report.h"

namespace gantry {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool IsWrapper(const FieldDescriptor* field) {
  return field->message_type() != nullptr && absl::StartsWith(field->message_type()->full_name(), "google.protobuf.") &&
         absl::EndsWith(field->message_type()->full_name(), "Value");
}

nlohmann::json Scalar(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64: return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT32: return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64: return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_DOUBLE: return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT: return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL: return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FieldDescriptor::CPPTYPE_ENUM: return (rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name();
    case FieldDescriptor::CPPTYPE_STRING: return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      const Message& sub = rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f);
      if (IsWrapper(f)) return Scalar(sub, sub.GetDescriptor()->FindFieldByName("value"), -1);
      return ToJsonValue(sub);
    }
  }
  return nullptr;
}

}  // namespace

nlohmann::json ToJsonValue(const Message& message) {
  nlohmann::json out = nlohmann::json::object();
  const auto* d = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      nlohmann::json list = nlohmann::json::array();
      for (int j = 0; j < r->FieldSize(message, f); ++j) list.push_back(Scalar(message, f, j));
      out[f->name()] = std::move(list);
    } else if (f->containing_oneof() != nullptr && !r->HasField(message, f)) {
      continue;  // only the oneof member that is set
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !r->HasField(message, f)) {
      out[f->name()] = nullptr;  // unset: a wrapper's "not given", an absent sub-message
    } else {
      out[f->name()] = Scalar(message, f, -1);
    }
  }
  return out;
}

namespace {

// Time to the run's quality target: seconds/samples/steps, or null where a batch size never
// reached it (and no key at all when the run has no target).
void AddTimeToTarget(const TimeToTarget& t, nlohmann::json& entry) {
  entry["target_reached"] = t.reached;
  entry["seconds_to_target"] = t.reached ? nlohmann::json(t.seconds) : nlohmann::json(nullptr);
  entry["samples_to_target"] = t.reached ? nlohmann::json(t.samples) : nlohmann::json(nullptr);
  entry["steps_to_target"] = t.reached ? nlohmann::json(t.steps) : nlohmann::json(nullptr);
}

// One entry per batch size: the timing summary and, when the run has a target, the time to it.
nlohmann::json SummaryJson(const std::vector<EpochRow>& rows, const v1::RunSpec& spec) {
  const std::optional<QualityGoal> goal = GoalOf(spec.target_fd().value(), spec.target_rel_l2().value());
  const std::vector<TimeToTarget> times = goal ? TimesToTarget(rows, *goal) : std::vector<TimeToTarget>{};
  nlohmann::json summary = nlohmann::json::array();
  for (const BatchSizeSummary& s : SummarizeByBatchSize(rows)) {
    nlohmann::json entry = {{"batch_size", s.batch_size},
                            {"epochs", s.epochs},
                            {"total_seconds", s.total_seconds},
                            {"seconds_per_epoch", s.seconds_per_epoch},
                            {"samples_per_s", s.samples_per_s},
                            {"allreduce_share", s.allreduce_share},
                            {"change_vs_smallest", s.change_vs_smallest}};
    for (const TimeToTarget& t : times) {
      if (t.batch_size == s.batch_size) AddTimeToTarget(t, entry);
    }
    summary.push_back(std::move(entry));
  }
  return summary;
}

}  // namespace

nlohmann::json JobReportJsonValue(const v1::JobReport& report) {
  nlohmann::json j;
  j["job"] = ToJsonValue(report.job());
  j["epochs"] = nlohmann::json::array();
  std::vector<EpochRow> rows;
  for (const v1::EpochMetrics& m : report.epochs()) {
    j["epochs"].push_back(ToJsonValue(m));
    rows.push_back(FromEpochMetrics(m));
  }
  j["summary"] = SummaryJson(rows, report.job().spec());
  j["stragglers"] = nlohmann::json::array();
  for (const v1::StragglerEvent& e : report.stragglers()) j["stragglers"].push_back(ToJsonValue(e));
  return j;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gantry
