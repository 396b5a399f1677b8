#include "cli/status_command.h"

#include <cstdio>

#include "cli/output.h"
#include "cli/rpc_exit_codes.h"

namespace gantry::cli {

StatusCommand::StatusCommand(CLI::App& app) : Command(app, "status", "show one job") {
  command_->add_option("id", job_id_, "job id, e.g. job-3")->required();
}

int StatusCommand::Run(Connection& client) {
  v1::GetJobRequest request;
  request.set_job_id(job_id_);
  v1::Job job;
  grpc::Status status = client.Call(&v1::Coordinator::Stub::GetJob, request, &job);
  if (!status.ok()) return FailCall(client, status);
  std::printf("%s", client.flags().json ? (ToJson(job) + "\n").c_str() : JobStatusText(job).c_str());
  return kExitOk;
}

}  // namespace gantry::cli
