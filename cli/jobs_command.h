// `gantry jobs [--state STATE]`: every job (or those in one state) in submission order,
// as a table or, with --json, {"jobs": [...]}.
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
  // Every page of ListJobs for `request`.
  static grpc::Status ListAll(Connection& client, v1::ListJobsRequest request, std::vector<v1::Job>& jobs);

  std::string state_;
};

}  // namespace gantry::cli
