// gantry report: the per-batch-size timing table of a job (timing.md), or its rows as
// epochs.csv or JSON.
#include <cstdio>

#include "cli/commands.h"
#include "cli/report_format.h"
#include "cli/rpc_exit_codes.h"

namespace gantry::cli {

int Report(Connection& client, const std::string& job_id, const std::string& format) {
  v1::GetJobReportRequest request;
  request.set_job_id(job_id);
  v1::JobReport report;
  grpc::Status status = client.stub().GetJobReport(client.Context().get(), request, &report);
  if (!status.ok()) return FailCall(client, status);
  if (format == "json") {
    std::printf("%s\n", ReportJson(report).c_str());
  } else if (format == "csv") {
    std::printf("%s", ReportCsv(report).c_str());
  } else {
    std::printf("%s", ReportMarkdown(report).c_str());
  }
  return kExitOk;
}

}  // namespace gantry::cli
