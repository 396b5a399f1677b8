// gantry submit, rollout, jobs, status, cancel, groups.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/rpc_exit_codes.h"
#include "cli/submit_request.h"
#include "report/state_names.h"

namespace gantry::cli {

int FailCall(const Connection& client, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return Fail(status, client.flags().json);
  return Fail(grpc::Status(status.error_code(),
                           absl::StrCat("cannot reach the coordinator at ", client.flags().coordinator, " (",
                                        status.error_message(),
                                        "); is gantry-coordinator running there? Set --coordinator or "
                                        "GANTRY_COORDINATOR")),
              client.flags().json);
}

namespace {

// Sends a submission, prints the job (and with `watch`, follows it).
int SubmitAndShow(Connection& client, const v1::SubmitJobRequest& request, bool watch) {
  v1::Job job;
  grpc::Status status = client.stub().SubmitJob(client.Context().get(), request, &job);
  if (!status.ok()) return FailCall(client, status);
  if (client.flags().json) {
    std::printf("%s\n", ToJson(job).c_str());
  } else {
    std::printf("submitted %s (%s)\n", Shown(job.id()).c_str(), JobStateName(job.state()).c_str());
  }
  std::fflush(stdout);
  if (!watch) return kExitOk;
  WatchArgs watch_args;
  watch_args.job_id = job.id();
  return Watch(client, watch_args);
}

}  // namespace

int Submit(Connection& client, const SubmitArgs& args) {
  absl::StatusOr<v1::SubmitJobRequest> request = BuildSubmitRequest(args);
  // A run file or flag that is wrong here is bad usage (2), whatever errno said: not
  // "job not found" (3) for a missing file, nor "unauthenticated" (4) for an unreadable one.
  if (!request.ok()) return Fail(absl::InvalidArgumentError(request.status().message()), client.flags().json);
  return SubmitAndShow(client, *request, args.watch);
}

int Rollout(Connection& client, const RolloutArgs& args) {
  return SubmitAndShow(client, BuildRolloutRequest(args), args.watch);
}

int Jobs(Connection& client, const std::string& state) {
  v1::ListJobsRequest request;
  if (!state.empty()) {
    absl::StatusOr<v1::JobState> parsed = ParseJobState(state);
    if (!parsed.ok()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--state: ", parsed.status().message())), client.flags().json);
    }
    request.set_state(*parsed);
  }
  request.set_page_size(1000);
  std::vector<v1::Job> jobs;
  do {
    v1::ListJobsResponse page;
    grpc::Status status = client.stub().ListJobs(client.Context().get(), request, &page);
    if (!status.ok()) return FailCall(client, status);
    jobs.insert(jobs.end(), page.jobs().begin(), page.jobs().end());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  if (client.flags().json) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::Job& job : jobs) list.push_back(ToJsonValue(job));
    std::printf("%s\n", DumpJson(nlohmann::json{{"jobs", list}}).c_str());
  } else {
    std::printf("%s", JobsTable(jobs).c_str());
  }
  return kExitOk;
}

int Status(Connection& client, const std::string& job_id) {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  grpc::Status status = client.stub().GetJob(client.Context().get(), request, &job);
  if (!status.ok()) return FailCall(client, status);
  std::printf("%s", client.flags().json ? (ToJson(job) + "\n").c_str() : JobStatusText(job).c_str());
  return kExitOk;
}

int Cancel(Connection& client, const std::string& job_id) {
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  grpc::Status status = client.stub().CancelJob(client.Context().get(), request, &job);
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

int Groups(Connection& client) {
  v1::ListGroupsResponse groups;
  grpc::Status status = client.stub().ListGroups(client.Context().get(), v1::ListGroupsRequest(), &groups);
  if (!status.ok()) return FailCall(client, status);
  std::printf("%s", client.flags().json ? (ToJson(groups) + "\n").c_str() : GroupsTable(groups).c_str());
  return kExitOk;
}

}  // namespace gantry::cli
