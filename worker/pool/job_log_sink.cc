#include "worker/pool/job_log_sink.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/write_fence.h"

namespace gantry {

JobLogSink::~JobLogSink() { Close(); }

absl::Status JobLogSink::Open(const std::string& path) {
  // A regular file only: a folder, a FIFO (which would block) or a link under the log's
  // name is refused by name (OpenForAppend).
  const absl::StatusOr<int> fd = OpenForAppend(path);
  if (!fd.ok()) return absl::UnavailableError(absl::StrCat("cannot open the log: ", fd.status().message()));
  std::FILE* file = ::fdopen(*fd, "a");
  if (file == nullptr) {
    const int error = errno;
    ::close(*fd);
    return absl::UnavailableError(absl::StrCat("cannot open the log ", path, ": ", std::strerror(error)));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = file;
  path_ = path;
  return absl::OkStatus();
}

void JobLogSink::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

void JobLogSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (file_ == nullptr) return;
  const absl::StatusOr<FenceHold> fence = HoldFenceFor(path_);
  if (!fence.ok()) {
    // Fenced out. Every earlier line of a fenced folder was flushed under its hold, so
    // the buffer is empty and fclose writes nothing.
    std::fclose(file_);
    file_ = nullptr;
    return;
  }
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  std::fwrite(formatted.data(), 1, formatted.size(), file_);
  if (fence->holds()) std::fflush(file_);  // inside the hold, not after the fence moved
}

void JobLogSink::flush_() {
  if (file_ != nullptr) std::fflush(file_);
}

}  // namespace gantry
