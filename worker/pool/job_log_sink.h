// A log sink that writes to the current job's log.txt: pointed at a file when a job
// starts and closed when it ends, while the pool's logger (and the heartbeat and report
// threads logging through it) stays the same. Thread-safe (spdlog's sink mutex).
// In a fenced run folder (write_fence.h) each line is written and flushed under the
// fence; once the job is fenced out the file is closed and lines go only to the pool's
// other sinks (its console), so not a byte reaches the folder.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "spdlog/sinks/base_sink.h"

namespace gantry {

class JobLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  ~JobLogSink() override;
  // Appends to `path` from now on (closing the previous file). The error names the path.
  absl::Status Open(const std::string& path);
  // Stops writing to a file.
  void Close();

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  std::FILE* file_ = nullptr;  // guarded by the base sink's mutex
  std::string path_;           // of file_
};

}  // namespace gantry
