#include "worker/train/run_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"

namespace gantry {
namespace fs = std::filesystem;

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
  if (fd < 0) return FileError(path, "run folder is not writable", errno);
  ::close(fd);
  std::remove(probe.c_str());
  return folder;
}

absl::Status RunFolder::WriteRunJson(const std::string& json_text) const {
  return WriteFileAtomically(File("run.json"), json_text);
}

absl::Status RunFolder::AppendEpochRow(const EpochRow& row) const {
  const std::string path = File("epochs.csv");
  std::string text = fs::exists(path) ? "" : EpochCsvHeader() + "\n";
  absl::StrAppend(&text, EpochCsvLine(row), "\n");
  return AppendAndSync(path, text);
}

absl::Status RunFolder::AppendStragglerRow(const StragglerEvent& event, int64_t batch_size, int64_t epoch) const {
  const std::string path = File("stragglers.csv");
  std::string text = fs::exists(path) ? "" : StragglerCsvHeader() + "\n";
  absl::StrAppend(&text, StragglerCsvLine(event, batch_size, epoch), "\n");
  return AppendAndSync(path, text);
}

absl::StatusOr<std::string> RunFolder::SamplePath(int64_t batch_size, bool sweep, int64_t epoch,
                                                  const std::string& extension) const {
  std::string dir = File("samples");
  if (sweep) {
    dir = absl::StrFormat("%s/b%04d", dir, batch_size);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return FileError(dir, "cannot create", ec.value());
  }
  return absl::StrFormat("%s/epoch_%03d.%s", dir, epoch, extension);
}

}  // namespace gantry
