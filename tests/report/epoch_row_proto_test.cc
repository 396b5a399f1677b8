#include "report/epoch_row_proto.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gantry {
namespace {

using google::protobuf::FieldDescriptor;

// Every epochs.csv column travels in the EpochMetrics field of its name and type, so a
// column added to the table without its field (or with another type) fails here.
TEST(EpochRowProto, EveryColumnHasItsField) {
  for (const EpochColumn& column : EpochColumns()) {
    const FieldDescriptor* field = v1::EpochMetrics::descriptor()->FindFieldByName(column.name);
    ASSERT_NE(field, nullptr) << column.name;
    const FieldDescriptor::CppType expected =
        std::holds_alternative<double EpochRow::*>(column.member)    ? FieldDescriptor::CPPTYPE_DOUBLE
        : std::holds_alternative<int EpochRow::*>(column.member)     ? FieldDescriptor::CPPTYPE_INT32
                                                                      : FieldDescriptor::CPPTYPE_INT64;
    // A double that may be unset travels in a DoubleValue (quality_kid).
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && expected == FieldDescriptor::CPPTYPE_DOUBLE) {
      EXPECT_EQ(field->message_type()->full_name(), "google.protobuf.DoubleValue") << column.name;
      continue;
    }
    EXPECT_EQ(field->cpp_type(), expected) << column.name;
  }
}

TEST(EpochRowProto, RoundTripsEveryColumnUnrounded) {
  EpochRow row;
  int i = 1;
  for (const EpochColumn& column : EpochColumns()) {
    std::visit([&](auto member) { row.*member = static_cast<std::remove_reference_t<decltype(row.*member)>>(i * 7 + 0.123456789); },
               column.member);
    ++i;
  }
  const EpochRow back = FromEpochMetrics(ToEpochMetrics(row));
  EXPECT_EQ(back, row);
  EXPECT_EQ(EpochCsvLine(back), EpochCsvLine(row));
}

TEST(EpochRowProto, AKidAbsentFromTheMessageIsNotMeasured) {
  // A row from a worker that predates quality_kid lacks the field: NaN, not the proto's 0
  // (which would read as a perfect score).
  v1::EpochMetrics old;
  old.set_quality_fd(12.5);
  EXPECT_FALSE(old.has_quality_kid());
  EXPECT_TRUE(std::isnan(FromEpochMetrics(old).quality_kid));
  // Not scored (NaN) it is not sent at all (the coordinator takes finite numbers only)
  // and comes back NaN; scored, it travels as it is, below 0 too.
  EXPECT_FALSE(ToEpochMetrics(EpochRow{}).has_quality_kid());
  EXPECT_EQ(FromEpochMetrics(ToEpochMetrics(EpochRow{})), EpochRow{});
  EpochRow row;
  row.quality_kid = -0.000125;
  EXPECT_TRUE(ToEpochMetrics(row).has_quality_kid());
  EXPECT_EQ(FromEpochMetrics(ToEpochMetrics(row)).quality_kid, -0.000125);
}

TEST(EpochRowProto, CsvHeaderIsTheContract) {
  // Column order is a user-facing contract: new columns only ever go at the end.
  EXPECT_EQ(EpochCsvHeader().rfind(
                "batch_size,epoch,seconds,steady_step_ms,samples_per_s,d_loss,g_loss,steps,step_p50_ms,step_p99_ms,"
                "data_wait_ms,world_size,allreduce_ms,allreduce_share,straggler_flags,loss_scale_g,loss_scale_d,"
                "skipped_steps_g,skipped_steps_d,peak_rss_mb",
                0),
            0u);
}

}  // namespace
}  // namespace gantry
