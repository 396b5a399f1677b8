#include "worker/pool/job_log_sink.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gantry {

JobLogSink::~JobLogSink() { Close(); }

absl::Status JobLogSink::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot open the job log ", path, ": ", std::strerror(errno)));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = file;
  return absl::OkStatus();
}

void JobLogSink::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

void JobLogSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (file_ == nullptr) return;
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  std::fwrite(formatted.data(), 1, formatted.size(), file_);
}

void JobLogSink::flush_() {
  if (file_ != nullptr) std::fflush(file_);
}

}  // namespace gantry
