#include "report/epoch_row_proto.h"

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

}  // namespace

v1::EpochMetrics ToEpochMetrics(const EpochRow& row) {
  v1::EpochMetrics m;
  const auto* reflection = m.GetReflection();
  for (const EpochColumn& column : EpochColumns()) {
    const FieldDescriptor* field = FieldOf(column);
    if (auto* i64 = std::get_if<int64_t EpochRow::*>(&column.member)) reflection->SetInt64(&m, field, row.**i64);
    if (auto* i32 = std::get_if<int EpochRow::*>(&column.member)) reflection->SetInt32(&m, field, row.**i32);
    if (auto* d = std::get_if<double EpochRow::*>(&column.member)) reflection->SetDouble(&m, field, row.**d);
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
    if (auto* d = std::get_if<double EpochRow::*>(&column.member)) row.**d = reflection->GetDouble(m, field);
  }
  return row;
}

}  // namespace gantry
