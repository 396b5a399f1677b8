#include "cli/jobs_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cli/output.h"
#include "cli/rpc_exit_codes.h"
#include "report/state_names.h"

namespace gantry::cli {

JobsCommand::JobsCommand(CLI::App& app) : Command(app, "jobs", "list jobs in submission order") {
  command_->add_option("--state", state_, absl::StrCat("only jobs in this state: ", JobStateNameList()));
}

int JobsCommand::Run(Connection& client) {
  v1::ListJobsRequest request;
  if (!state_.empty()) {
    absl::StatusOr<v1::JobState> parsed = ParseJobState(state_);
    if (!parsed.ok()) {
      const absl::Status bad_flag = absl::InvalidArgumentError(absl::StrCat("--state: ", parsed.status().message()));
      return Fail(bad_flag, client.flags().json);
    }
    request.set_state(*parsed);
  }
  request.set_page_size(1000);
  Listing listing;
  if (grpc::Status status = ListAll(client, request, listing); !status.ok()) return FailCall(client, status);
  // A record the coordinator cannot read is named on stderr; the others are listed.
  for (const v1::UnreadableJob& bad : listing.unreadable) {
    std::fprintf(stderr, "gantry: %s\n", Shown(UnreadableJobText(bad)).c_str());
  }
  if (client.flags().json) {
    nlohmann::json list = nlohmann::json::array(), unreadable = nlohmann::json::array();
    for (const v1::Job& job : listing.jobs) list.push_back(ToJsonValue(job));
    for (const v1::UnreadableJob& bad : listing.unreadable) unreadable.push_back(ToJsonValue(bad));
    nlohmann::json out{{"jobs", list}};
    if (!listing.unreadable.empty()) out["unreadable_jobs"] = unreadable;  // only then: the usual shape stays
    std::printf("%s\n", DumpJson(out).c_str());
  } else {
    std::printf("%s", JobsTable(listing.jobs).c_str());
  }
  return kExitOk;
}

grpc::Status JobsCommand::ListAll(Connection& client, v1::ListJobsRequest request, Listing& listing) {
  do {
    v1::ListJobsResponse page;
    grpc::Status status = client.Call(&v1::Coordinator::Stub::ListJobs, request, &page);
    if (!status.ok()) return status;
    listing.jobs.insert(listing.jobs.end(), page.jobs().begin(), page.jobs().end());
    listing.unreadable.insert(listing.unreadable.end(), page.unreadable_jobs().begin(), page.unreadable_jobs().end());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

}  // namespace gantry::cli
