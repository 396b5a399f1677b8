// What `gantry` prints of text that came from the coordinator: a job or group name, an
// error, a host is shown escaped, so an old job stored before the coordinator refused
// such names (or a hostile server) cannot clear the screen or forge a table row.
#include "cli/output.h"

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kForged[] = "x\x1b[2J\njob-9      succeeded";

TEST(Output, TablesShowServerTextEscaped) {
  v1::Job job;
  job.set_id("job-1");
  job.set_name(kForged);
  job.set_error("bad\rthing");
  job.set_group_id("grp\x07");
  const std::string table = JobsTable({job});
  EXPECT_THAT(table, Not(HasSubstr("\x1b")));
  EXPECT_THAT(table, HasSubstr("x\\e[2J\\njob-9      succeeded"));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(table, '\n', absl::SkipEmpty())).size(), 2u);  // header + 1 job

  const std::string status = JobStatusText(job);
  EXPECT_THAT(status, HasSubstr("x\\e[2J\\njob-9"));
  EXPECT_THAT(status, HasSubstr("bad\\rthing"));
  EXPECT_THAT(status, HasSubstr("grp\\x07"));
  EXPECT_THAT(status, Not(HasSubstr("\x1b")));

  v1::ListGroupsResponse groups;
  v1::Group* g = groups.add_groups();
  g->set_id("group-1");
  g->set_name("pool\x1b]0;title\x07");
  g->add_hosts("node\n1");
  const std::string group_table = GroupsTable(groups);
  EXPECT_THAT(group_table, HasSubstr("pool\\e]0;title\\x07"));
  EXPECT_THAT(group_table, HasSubstr("node\\n1"));
  EXPECT_THAT(group_table, Not(HasSubstr("\x1b")));
}

TEST(Output, JsonEscapesControlsAndSurvivesBytesThatAreNotUtf8) {
  v1::Job job;
  job.set_name(kForged);
  const std::string json = ToJson(job);
  EXPECT_THAT(json, HasSubstr(R"("name":"x\u001b[2J\njob-9      succeeded")"));
  // A server's error text is not a proto string: it may hold anything.
  nlohmann::json error;
  error["message"] = std::string("bad \xff byte");
  EXPECT_EQ(DumpJson(error), "{\"message\":\"bad \xef\xbf\xbd byte\"}");
}

TEST(Output, ARolloutsStatusNamesItsSourceAndWhereItWrites) {
  v1::Job job;
  job.set_id("job-4");
  job.mutable_rollout()->set_source_job_id("job-3");
  job.mutable_rollout()->set_case_dir("/data/flow/case-2");
  job.mutable_rollout()->set_steps(20);
  job.mutable_checkpoint()->set_host("node1");
  job.mutable_checkpoint()->set_run_folder("/runs/job-3");
  job.mutable_checkpoint()->set_run_step(30);
  const std::string status = JobStatusText(job);
  EXPECT_THAT(status, HasSubstr("rollout      of job-3: 20 step(s) over /data/flow/case-2\n"));
  EXPECT_THAT(status, HasSubstr("outputs      node1:/runs/job-3/rollout-case-2-job-4\n"));
  EXPECT_THAT(status, Not(HasSubstr("epochs")));
  job.mutable_progress()->set_epoch(1);
  job.mutable_progress()->set_step(5);
  job.mutable_progress()->set_steps_per_epoch(20);
  job.mutable_progress()->set_samples_per_s(250);
  EXPECT_THAT(JobStatusText(job), HasSubstr("progress     step 5/20, 250.0 tiles/s\n"));
  EXPECT_THAT(JobsTable({job}), HasSubstr(" step 5/20 "));
}

}  // namespace
}  // namespace gantry
