// `gantry groups`: one line per group, the devices each rank reported last.
#include "cli/output.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(GroupsTable, ShowsEachGroupsHostsAndDevices) {
  v1::ListGroupsResponse groups;
  v1::Group* gpu = groups.add_groups();
  gpu->set_id("group-1");
  gpu->set_world_size(2);
  gpu->add_hosts("node-a");
  gpu->add_hosts("node-a");
  gpu->add_devices("cuda:0 NVIDIA H100");
  gpu->add_devices("cuda:1 NVIDIA H100");
  v1::Group* old = groups.add_groups();  // registered without devices
  old->set_id("group-2");
  old->set_world_size(1);
  old->add_hosts("node-b");
  const std::string table = cli::GroupsTable(groups);
  EXPECT_THAT(table, HasSubstr("HOSTS"));
  EXPECT_THAT(table, HasSubstr("DEVICES"));
  EXPECT_THAT(table, HasSubstr("node-a,node-a"));
  EXPECT_THAT(table, HasSubstr("cuda:0 NVIDIA H100,cuda:1 NVIDIA H100"));
  EXPECT_THAT(table, ::testing::ContainsRegex("group-2 .*node-b +-\n"));
}

}  // namespace
}  // namespace gantry
