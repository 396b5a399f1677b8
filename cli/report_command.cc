#include "cli/report_command.h"

#include <cstdio>

#include "cli/output.h"
#include "cli/report_format.h"
#include "cli/rpc_exit_codes.h"

namespace gantry::cli {

ReportCommand::ReportCommand(CLI::App& app)
    : Command(app, "report", "timing per batch size (timing.md); --csv: epochs.csv rows") {
  command_->add_option("id", job_id_, "job id")->required();
  command_->add_flag("--csv", csv_, "the rows as epochs.csv");
}

int ReportCommand::Run(Connection& client) {
  v1::GetJobReportRequest request;
  request.set_job_id(job_id_);
  v1::JobReport report;
  grpc::Status status = client.Call(&v1::Coordinator::Stub::GetJobReport, request, &report);
  if (!status.ok()) return FailCall(client, status);
  if (csv_) {
    std::printf("%s", ReportCsv(report).c_str());
  } else if (client.flags().json) {
    std::printf("%s\n", ReportJson(report).c_str());
  } else {
    std::printf("%s", ReportMarkdown(report).c_str());
  }
  return kExitOk;
}

}  // namespace gantry::cli
