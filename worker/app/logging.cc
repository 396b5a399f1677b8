#include "worker/app/logging.h"

#include <memory>

#include "absl/strings/str_format.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "worker/pool/job_log_sink.h"

namespace gantry {

void SetUpWorkerLogging(int rank, const std::vector<spdlog::sink_ptr>& rank0_sinks) {
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stdout_color_sink_mt>()};
  if (rank == 0) sinks.insert(sinks.end(), rank0_sinks.begin(), rank0_sinks.end());
  auto logger = std::make_shared<spdlog::logger>("gantry", sinks.begin(), sinks.end());
  logger->set_pattern(rank == 0 ? "[%Y-%m-%d %H:%M:%S.%e] [%l] %v"
                                : absl::StrFormat("[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank));
  logger->set_level(rank == 0 ? spdlog::level::info : spdlog::level::warn);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void SetUpRunLogging(int rank, const std::string& log_path) {
  std::vector<spdlog::sink_ptr> file;
  absl::Status opened;
  if (!log_path.empty() && rank == 0) {
    auto sink = std::make_shared<JobLogSink>();
    opened = sink->Open(log_path);
    if (opened.ok()) file.push_back(std::move(sink));
  }
  SetUpWorkerLogging(rank, file);
  // The run goes on, logging to the console only (RunFolder refuses such a log.txt first).
  if (!opened.ok()) spdlog::warn("{}; logging to the console only", std::string(opened.message()));
}

}  // namespace gantry
