// `gantry jobs [--state STATE]`: every job (or those in one state) in submission order,
// as a table (with why each queued job waits, when something keeps it waiting) or, with
// --json, {"jobs": [...], "unreadable_jobs": [...]}. A job whose stored record the
// coordinator cannot read is named on stderr (ListJobsResponse.unreadable_jobs) and the
// rest is listed as usual.
#pragma once

#include <string>
#include <vector>

#include "cli/command.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry::cli {

class JobsCommand : public Command {
 public:
  explicit JobsCommand(CLI::App& app);
  int Run(Connection& client) override;

 private:
  struct Listing {
    std::vector<v1::Job> jobs;
    std::vector<v1::UnreadableJob> unreadable;
  };
  // Every page of ListJobs for `request`.
  static grpc::Status ListAll(Connection& client, v1::ListJobsRequest request, Listing& listing);

  std::string state_;
};

}  // namespace gantry::cli
