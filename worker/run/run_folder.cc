#include "worker/run/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "common/status_macros.h"

namespace gantry {
namespace fs = std::filesystem;
namespace {

// What a run writes at the top of its folder, and of what kind.
constexpr const char* kRunFiles[] = {"run.json",  "epochs.csv", "log.txt",    "stragglers.csv",
                                     "timing.md", "timing.png", "losses.png", kFenceFileName};
constexpr const char* kRunFolders[] = {"samples", "checkpoints", "tensorboard"};

template <size_t N>
bool IsIn(const std::string& name, const char* const (&names)[N]) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}
bool IsRunFile(const std::string& name) { return IsIn(name, kRunFiles); }
bool IsRunFolder(const std::string& name) { return IsIn(name, kRunFolders); }

// A temporary file an interrupted atomic write of a run file left ("run.json.tmp.123.0").
bool IsLeftoverTemporary(const std::string& name) {
  const size_t tmp = name.find(".tmp.");
  return (tmp != std::string::npos && IsRunFile(name.substr(0, tmp))) || name.rfind(".write-probe.", 0) == 0;
}

// An entry of the run folder with a run's name must be what that name says: run files
// regular files (not links: appending to one would write wherever it points), run folders
// folders (links to folders are fine). Anything else would abort or hang the run later.
absl::Status CheckEntryKind(const std::string& folder, const std::string& name) {
  const std::string path = folder + "/" + name;
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(path, ec);
  const fs::file_status target = fs::status(path, ec);
  std::string problem;
  if (IsRunFile(name) && !fs::is_regular_file(own)) {
    problem = fs::is_symlink(own) ? "is a symbolic link" : fs::is_directory(own) ? "is a folder" : "is not a file";
  } else if (IsRunFolder(name) && !fs::is_directory(target)) {
    problem = ec ? absl::StrCat("cannot be followed (", ec.message(), ")") : "is not a folder";
  }
  if (problem.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": ", problem, ", but a run writes its ", name, " there", IsRunFile(name) ? " as a file" : " as a folder",
      "; move it away, or choose another --out"));
}

// Every entry of `folder` with a run's name is of its kind; with `only_run_entries` (a
// new run's folder) an entry of another name is refused too: it is someone's, and a run
// writes only into a new folder, an empty one, or one a run started in and left no epoch.
absl::Status CheckRunFolderEntries(const std::string& folder, bool only_run_entries) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (IsRunFile(name) || IsRunFolder(name)) {
      RETURN_IF_ERROR(CheckEntryKind(folder, name));
    } else if (only_run_entries && !IsLeftoverTemporary(name)) {
      return absl::FailedPreconditionError(absl::StrCat(
          folder, ": holds ", EscapeForTerminal(name), ", which is not a run's file; a new run is written only into a "
          "new or empty folder: choose another --out"));
    }
  }
  if (ec) return FileError(folder, "cannot list the run folder", ec.value());
  return absl::OkStatus();
}

// Whether `path` exists (as anything, a dangling link too), without throwing.
bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Creates and removes a file of its own (a unique name, O_EXCL): never one of the user's.
absl::Status ProbeWritable(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const std::string probe = absl::StrCat(path, "/.write-probe.", ::getpid(), ".", counter.fetch_add(1));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(path, "run folder is not writable", errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

// flock(fd, LOCK_EX) without blocking, retried for up to `wait_seconds`; the errno of
// the last try, 0 on success.
int LockExclusiveWithin(int fd, double wait_seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    const int error = errno;
    if (error != EWOULDBLOCK || std::chrono::steady_clock::now() >= end) return error;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The exclusive flock on the folder `path` (see Create), as a descriptor closed by the
// last owner; null where the filesystem has no flock on folders. Another holder is
// waited for up to `wait_seconds`.
absl::StatusOr<std::shared_ptr<const int>> LockFolder(const std::string& path, double wait_seconds = 0) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FileError(path, "cannot open the run folder", errno);
  if (const int error = LockExclusiveWithin(fd, wait_seconds); error != 0) {
    ::close(fd);
    if (error != EWOULDBLOCK) return std::shared_ptr<const int>();
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": another process is writing a run in this folder (a train --out or --resume of it", 
        wait_seconds > 0 ? absl::StrCat(", still after ", wait_seconds, " s") : "", "); wait for it to "
        "end, or choose another --out"));
  }
  return std::shared_ptr<const int>(new int(fd), [](const int* held) {
    ::close(*held);
    delete held;
  });
}

// Create's refusals of a folder that holds something: a run, a run's checkpoints, or
// entries a run does not write.
absl::Status CheckFreeForARun(const std::string& path) {
  std::error_code ec;
  if (Exists(path + "/epochs.csv")) {
    return absl::AlreadyExistsError(absl::StrCat(
        path, ": already holds a run (epochs.csv exists); choose another --out or move the old run away"));
  }
  const fs::path checkpoints = fs::path(path) / "checkpoints";
  if (fs::is_directory(checkpoints, ec) && !fs::is_empty(checkpoints, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": already holds a run's checkpoints; continue it with ",
                                                 "--resume ", path, ", or choose another --out"));
  }
  if (Exists(path)) RETURN_IF_ERROR(CheckRunFolderEntries(path, /*only_run_entries=*/true));
  return absl::OkStatus();
}

}  // namespace

std::string FencedOutReason(const std::string& folder, int64_t epoch) {
  const FenceToken now = ReadFence(folder);
  if (now.epoch <= epoch) return "";
  return absl::StrCat(folder, " was claimed by fencing epoch ", now.epoch, " (", now.holder, "), so epoch ", epoch,
                      " stops without writing another byte there");
}

absl::Status RunFolder::Fence(const RunFolderClaim& claim) {
  RETURN_IF_ERROR(ClaimFence(path_, claim.token, claim.lock_wait_seconds));
  fence_ = std::make_shared<FencedFolder>(path_, claim.token);
  return absl::OkStatus();
}

absl::StatusOr<RunFolder> RunFolder::Create(const std::string& path, const RunFolderClaim* claim) {
  if (path.empty()) return absl::InvalidArgumentError("--out: the run folder path is empty");
  std::error_code ec;
  if (Exists(path) && !fs::is_directory(path, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": exists and is not a folder; choose another --out"));
  }
  // Checked before anything is created, and again under the lock: a run that another
  // process started and even finished since is then refused, never written over.
  RETURN_IF_ERROR(CheckFreeForARun(path));
  fs::create_directories(fs::path(path) / "samples", ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot create run folder: ", ec.message(), " (choose another --out)"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const int> lock, LockFolder(path));
  RETURN_IF_ERROR(CheckFreeForARun(path));
  // Probe writability now, not after the first epoch's work.
  RETURN_IF_ERROR(ProbeWritable(path));
  RunFolder folder(path, std::move(lock));
  if (claim != nullptr) RETURN_IF_ERROR(folder.Fence(*claim));
  return folder;
}

absl::StatusOr<RunFolder> RunFolder::Open(const std::string& path, const RunFolderClaim* claim) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(path) / "run.json", ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": not a run folder (no run.json); give the --out folder of a run"));
  }
  RETURN_IF_ERROR(CheckRunFolderEntries(path, /*only_run_entries=*/false));
  // The claim comes before the lock: the earlier attempt, still writing, sees it at its
  // next step, stops and lets go of the lock.
  if (claim != nullptr) RETURN_IF_ERROR(ClaimFence(path, claim->token, claim->lock_wait_seconds));
  ASSIGN_OR_RETURN(std::shared_ptr<const int> lock, LockFolder(path, claim != nullptr ? claim->lock_wait_seconds : 0));
  RETURN_IF_ERROR(ProbeWritable(path));
  RunFolder folder(path, std::move(lock));
  if (claim != nullptr) folder.fence_ = std::make_shared<FencedFolder>(path, claim->token);
  return folder;
}

absl::Status RunFolder::WriteRunJson(const std::string& json_text) const {
  return WriteFileAtomically(File("run.json"), json_text);
}

absl::Status RunFolder::AppendEpochRow(const EpochRow& row) const {
  const std::string path = File("epochs.csv");
  std::string text = Exists(path) ? "" : EpochCsvHeader() + "\n";
  absl::StrAppend(&text, EpochCsvLine(row), "\n");
  return AppendAndSync(path, text);
}

absl::Status RunFolder::ResetRows(const std::vector<EpochRow>& rows, const std::string& straggler_rows) const {
  std::string epochs = EpochCsvHeader() + "\n";
  for (const EpochRow& row : rows) absl::StrAppend(&epochs, EpochCsvLine(row), "\n");
  if (rows.empty()) {
    ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(File("epochs.csv")));
    std::error_code ec;
    fs::remove(File("epochs.csv"), ec);
  } else {
    RETURN_IF_ERROR(WriteFileAtomically(File("epochs.csv"), epochs));
  }
  if (straggler_rows.empty()) {
    ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(File("stragglers.csv")));
    std::error_code ec;
    fs::remove(File("stragglers.csv"), ec);
    return absl::OkStatus();
  }
  return WriteFileAtomically(File("stragglers.csv"), StragglerCsvHeader() + "\n" + straggler_rows);
}

absl::Status RunFolder::AppendStragglerRow(const StragglerEvent& event, int64_t batch_size, int64_t epoch) const {
  const std::string path = File("stragglers.csv");
  std::string text = Exists(path) ? "" : StragglerCsvHeader() + "\n";
  absl::StrAppend(&text, StragglerCsvLine(event, batch_size, epoch), "\n");
  return AppendAndSync(path, text);
}

absl::StatusOr<std::string> RunFolder::SamplePath(int64_t batch_size, bool sweep, int64_t epoch,
                                                  const std::string& extension) const {
  std::string dir = File("samples");
  if (sweep) {
    dir = absl::StrFormat("%s/b%04d", dir, batch_size);
    ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(dir));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return FileError(dir, "cannot create", ec.value());
  }
  return absl::StrFormat("%s/epoch_%03d.%s", dir, epoch, extension);
}

}  // namespace gantry
