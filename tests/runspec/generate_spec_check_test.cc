// A generate submission's walk (runspec/generate_spec_check.h): rows checked as the worker
// checks them, without signed overflow (issue 45, item 7).
#include "runspec/generate_spec_check.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::GenerateSpec Walk(const std::string& ends) {
  v1::GenerateSpec g;
  g.set_source_job_id("job-1");
  g.set_interpolate(ends);
  g.mutable_steps()->set_value(3);
  return g;
}

TEST(GenerateSpecCheck, AWalkPastTheSeededDrawIsRefusedAsTheWorkerWould) {
  EXPECT_TRUE(CheckGenerateSpec(Walk("0,99999")).ok());
  const std::string far(CheckGenerateSpec(Walk("0,9223372036854775807")).message());
  EXPECT_THAT(far, HasSubstr("generate.interpolate: '0,9223372036854775807': row 9223372036854775807 is past the "
                             "seeded draw's rows 0 to 99999"));
  EXPECT_THAT(far, Not(HasSubstr("-9223372036854775808")));
  EXPECT_THAT(CheckGenerateSpec(Walk("100000,3")).message(), HasSubstr("row 100000 is past"));
}

TEST(GenerateSpecCheck, InterpolateEndsAreTwoRowsQuotedAsTyped) {
  const absl::StatusOr<std::pair<int64_t, int64_t>> ends = InterpolateEnds("3,9223372036854775807");
  ASSERT_TRUE(ends.ok());
  EXPECT_EQ(ends->second, std::numeric_limits<int64_t>::max());
  for (const char* bad : {"0,9223372036854775808", "-1,2", "1", "1,2,3", "a,b", "1e3,2", " 1,2", "0x1,2", ""}) {
    const absl::StatusOr<std::pair<int64_t, int64_t>> refused = InterpolateEnds(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr(std::string("'") + bad + "': give two latent rows as A,B"));
  }
}

}  // namespace
}  // namespace gantry
