#include "worker/train/run_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace fs = std::filesystem;
namespace {

absl::Status IoError(const std::string& path, const std::string& what, int err) {
  std::string hint;
  if (err == ENOSPC) hint = " (the disk is full: free space or choose another --out)";
  if (err == EACCES || err == EROFS) hint = " (not writable: choose another --out)";
  return absl::InternalError(absl::StrCat(path, ": ", what, ": ", std::strerror(err), hint));
}

// Writes all of `text` to fd, then fsyncs it.
absl::Status WriteAllAndSync(int fd, const std::string& path, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path, "write failed", errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return IoError(path, "fsync failed", errno);
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(tmp, "cannot create", errno);
  absl::Status s = WriteAllAndSync(fd, tmp, text);
  ::close(fd);
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) s = IoError(path, "rename failed", errno);
  if (!s.ok()) std::remove(tmp.c_str());
  return s;
}

absl::StatusOr<RunFolder> RunFolder::Create(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("--out: the run folder path is empty");
  std::error_code ec;
  fs::create_directories(fs::path(path) / "samples", ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot create run folder: ", ec.message(), " (choose another --out)"));
  }
  if (fs::exists(fs::path(path) / "epochs.csv")) {
    return absl::AlreadyExistsError(absl::StrCat(
        path, ": already holds a run (epochs.csv exists); choose another --out or move the old run away"));
  }
  // Probe writability now, not after the first epoch's work.
  RunFolder folder(path);
  const std::string probe = folder.File(".write-probe");
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path, "run folder is not writable", errno);
  ::close(fd);
  std::remove(probe.c_str());
  return folder;
}

absl::Status RunFolder::WriteRunJson(const std::string& json_text) const {
  return WriteFileAtomically(File("run.json"), json_text);
}

absl::Status RunFolder::AppendEpochRow(const EpochRow& row) const {
  const std::string path = File("epochs.csv");
  const bool is_new = !fs::exists(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path, "cannot open for append", errno);
  std::string text = is_new ? EpochCsvHeader() + "\n" : "";
  absl::StrAppend(&text, EpochCsvLine(row), "\n");
  absl::Status s = WriteAllAndSync(fd, path, text);
  ::close(fd);
  return s;
}

absl::StatusOr<std::string> RunFolder::SamplePath(int64_t batch_size, bool sweep, int64_t epoch,
                                                  const std::string& extension) const {
  std::string dir = File("samples");
  if (sweep) {
    dir = absl::StrFormat("%s/b%04d", dir, batch_size);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return IoError(dir, "cannot create", ec.value());
  }
  return absl::StrFormat("%s/epoch_%03d.%s", dir, epoch, extension);
}

}  // namespace gantry
