#include "report/epoch_row_proto.h"

#include <cmath>

#include "common/check.h"

namespace gantry {
namespace {

using google::protobuf::FieldDescriptor;

// The EpochMetrics field of a column; its presence and type are a build invariant
// (tests/report/epoch_row_proto_test.cc checks every column).
const FieldDescriptor* FieldOf(const EpochColumn& column) {
  const FieldDescriptor* field = v1::EpochMetrics::descriptor()->FindFieldByName(column.name);
  CHECK(field != nullptr) << "gantry.v1.EpochMetrics has no field for epochs.csv column " << column.name;
  return field;
}

// Whether `field` is a google.protobuf.DoubleValue: a double column that may be unset
// (quality_kid; an unset value is NaN in EpochRow).
bool IsDoubleWrapper(const FieldDescriptor* field) {
  return field->message_type() != nullptr && field->message_type()->full_name() == "google.protobuf.DoubleValue";
}

}  // namespace

v1::EpochMetrics ToEpochMetrics(const EpochRow& row) {
  v1::EpochMetrics m;
  const auto* reflection = m.GetReflection();
  for (const EpochColumn& column : EpochColumns()) {
    const FieldDescriptor* field = FieldOf(column);
    if (auto* i64 = std::get_if<int64_t EpochRow::*>(&column.member)) reflection->SetInt64(&m, field, row.**i64);
    if (auto* i32 = std::get_if<int EpochRow::*>(&column.member)) reflection->SetInt32(&m, field, row.**i32);
    auto* d = std::get_if<double EpochRow::*>(&column.member);
    if (d == nullptr) continue;
    if (!IsDoubleWrapper(field)) {
      reflection->SetDouble(&m, field, row.**d);
    } else if (!std::isnan(row.**d)) {  // NaN, not measured: left unset (the coordinator takes finite numbers only)
      google::protobuf::Message* wrapper = reflection->MutableMessage(&m, field);
      wrapper->GetReflection()->SetDouble(wrapper, wrapper->GetDescriptor()->FindFieldByName("value"), row.**d);
    }
  }
  return m;
}

EpochRow FromEpochMetrics(const v1::EpochMetrics& m) {
  EpochRow row;
  const auto* reflection = m.GetReflection();
  for (const EpochColumn& column : EpochColumns()) {
    const FieldDescriptor* field = FieldOf(column);
    if (auto* i64 = std::get_if<int64_t EpochRow::*>(&column.member)) row.**i64 = reflection->GetInt64(m, field);
    if (auto* i32 = std::get_if<int EpochRow::*>(&column.member)) row.**i32 = reflection->GetInt32(m, field);
    auto* d = std::get_if<double EpochRow::*>(&column.member);
    if (d == nullptr) continue;
    if (!IsDoubleWrapper(field)) {
      row.**d = reflection->GetDouble(m, field);
    } else if (reflection->HasField(m, field)) {  // unset (also from an older worker): EpochRow's NaN
      const google::protobuf::Message& wrapper = reflection->GetMessage(m, field);
      row.**d = wrapper.GetReflection()->GetDouble(wrapper, wrapper.GetDescriptor()->FindFieldByName("value"));
    }
  }
  return row;
}

}  // namespace gantry
