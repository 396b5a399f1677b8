#include "cli/groups_command.h"

#include <cstdio>

#include "cli/output.h"
#include "cli/rpc_exit_codes.h"

namespace gantry::cli {

int GroupsCommand::Run(Connection& client) {
  v1::ListGroupsResponse groups;
  grpc::Status status = client.Call(&v1::Coordinator::Stub::ListGroups, v1::ListGroupsRequest(), &groups);
  if (!status.ok()) return FailCall(client, status);
  std::printf("%s", client.flags().json ? (ToJson(groups) + "\n").c_str() : GroupsTable(groups).c_str());
  return kExitOk;
}

}  // namespace gantry::cli
