#include "worker/run/run_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/status_macros.h"

namespace gantry {
namespace fs = std::filesystem;
namespace {

absl::Status ProbeWritable(const std::string& path) {
  const std::string probe = path + "/.write-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(path, "run folder is not writable", errno);
  ::close(fd);
  std::remove(probe.c_str());
  return absl::OkStatus();
}

}  // namespace

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
  const fs::path checkpoints = fs::path(path) / "checkpoints";
  if (fs::is_directory(checkpoints, ec) && !fs::is_empty(checkpoints, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": already holds a run's checkpoints; continue it with ",
                                                 "--resume ", path, ", or choose another --out"));
  }
  // Probe writability now, not after the first epoch's work.
  RETURN_IF_ERROR(ProbeWritable(path));
  return RunFolder(path);
}

absl::StatusOr<RunFolder> RunFolder::Open(const std::string& path) {
  if (!fs::exists(fs::path(path) / "run.json")) {
    return absl::NotFoundError(absl::StrCat(path, ": not a run folder (no run.json); give the --out folder of a run"));
  }
  RETURN_IF_ERROR(ProbeWritable(path));
  return RunFolder(path);
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

absl::Status RunFolder::ResetRows(const std::vector<EpochRow>& rows, const std::string& straggler_rows) const {
  std::string epochs = EpochCsvHeader() + "\n";
  for (const EpochRow& row : rows) absl::StrAppend(&epochs, EpochCsvLine(row), "\n");
  if (rows.empty()) {
    std::error_code ec;
    fs::remove(File("epochs.csv"), ec);
  } else {
    RETURN_IF_ERROR(WriteFileAtomically(File("epochs.csv"), epochs));
  }
  if (straggler_rows.empty()) {
    std::error_code ec;
    fs::remove(File("stragglers.csv"), ec);
    return absl::OkStatus();
  }
  return WriteFileAtomically(File("stragglers.csv"), StragglerCsvHeader() + "\n" + straggler_rows);
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
