#include "cli/cancel_command.h"

#include <cstdio>

#include "cli/output.h"
#include "cli/rpc_exit_codes.h"
#include "report/state_names.h"

namespace gantry::cli {

CancelCommand::CancelCommand(CLI::App& app)
    : Command(app, "cancel", "cancel a job (a running one stops at its next report)") {
  command_->add_option("id", job_id_, "job id")->required();
}

int CancelCommand::Run(Connection& client) {
  v1::CancelJobRequest request;
  request.set_job_id(job_id_);
  v1::Job job;
  grpc::Status status = client.Call(&v1::Coordinator::Stub::CancelJob, request, &job);
  if (!status.ok()) return FailCall(client, status);
  if (client.flags().json) {
    std::printf("%s\n", ToJson(job).c_str());
  } else if (job.state() == v1::JOB_STATE_CANCELLING) {
    std::printf("%s: cancelling (%s stops at its next report)\n", Shown(job.id()).c_str(),
                Shown(job.group_id()).c_str());
  } else {
    std::printf("%s: %s\n", Shown(job.id()).c_str(), JobStateName(job.state()).c_str());
  }
  return kExitOk;
}

}  // namespace gantry::cli
