#include "worker/checkpoint/checkpoint_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "common/write_fence.h"
#include "spdlog/spdlog.h"
#include "worker/checkpoint/checkpoint_codec.h"

namespace gantry {
namespace fs = std::filesystem;
namespace {

// "ckpt-<digits>.bin" -> the step; anything else -> -1.
int64_t StepOf(const std::string& filename) {
  static const std::regex kName("ckpt-([0-9]{1,18})\\.bin");
  std::smatch m;
  int64_t step = -1;
  if (!std::regex_match(filename, m, kName) || !absl::SimpleAtoi(m[1].str(), &step)) return -1;
  return step;
}

// Size and modification time of `path`; -1s when it cannot be stat'ed.
std::pair<int64_t, int64_t> SizeAndTime(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {-1, -1};
  return {st.st_size, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

// Renames the regular file `path` to the first free PATH.not-this-run[.N] (renameat2
// with RENAME_NOREPLACE: nothing that appears meanwhile is replaced); returns the new name.
absl::StatusOr<std::string> MoveAside(const std::string& path) {
  constexpr int kMaxTries = 1000;
  for (int n = 0; n < kMaxTries; ++n) {
    const std::string aside = n == 0 ? path + ".not-this-run" : absl::StrCat(path, ".not-this-run.", n);
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0) return aside;
    if (errno != EEXIST) return FileError(path, "cannot rename it aside", errno);
  }
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": ", kMaxTries, " files named ", path, ".not-this-run.* already: clean them up"));
}

}  // namespace

absl::StatusOr<TrainingState> ReadUsableCheckpoint(const CheckpointFile& file, const CheckpointExpectations& run,
                                                   std::vector<uint8_t>* bytes_out) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(file.path, kMaxCheckpointBytes));
  ASSIGN_OR_RETURN(TrainingState state, DecodeCheckpoint(bytes, file.path));
  RETURN_IF_ERROR(CheckMatchesRun(state, run, file.path));
  // A checkpoint is saved under its own step; one under another name was copied or
  // renamed, and resuming from it would leave the newest-by-name checkpoint stale.
  if (state.position.run_step != file.step) {
    return absl::FailedPreconditionError(absl::StrCat(file.path, ": saved at run step ", state.position.run_step,
                                                      " but named for step ", file.step,
                                                      " (renamed or copied?); rename it ckpt-",
                                                      state.position.run_step, ".bin to use it"));
  }
  if (bytes_out != nullptr) *bytes_out = std::move(bytes);
  return state;
}

std::string CheckpointStore::PathFor(int64_t step) const { return absl::StrFormat("%s/ckpt-%d.bin", dir_, step); }

absl::Status CheckpointStore::Save(int64_t step, std::span<const uint8_t> bytes, int64_t keep,
                                   const CheckpointExpectations& run) {
  // Held for the whole save: its folder, its file and what it moves aside.
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(dir_));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return FileError(dir_, "cannot create the checkpoint folder", ec.value());
  const std::string path = PathFor(step);
  const ByteSpan contents{bytes.data(), bytes.size()};
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    // Nothing there: created without ever replacing what may appear meanwhile.
    RETURN_IF_ERROR(CreateFileAtomically(path, {contents}));
  } else if (const absl::Status own = IsThisRunsCheckpoint({step, path}, run); own.ok()) {
    RETURN_IF_ERROR(WriteFileAtomically(path, {contents}));  // this run's own state of that step
  } else if (S_ISREG(st.st_mode)) {
    // Someone else's file (another model's checkpoint, a damaged copy): kept under
    // another name, so the run goes on and nothing is lost.
    ASSIGN_OR_RETURN(const std::string aside, MoveAside(path));
    verdicts_.erase(path);
    spdlog::warn("{}: not a usable checkpoint of this run ({}); renamed to {} and kept, so this run can save its "
                 "checkpoint of step {}",
                 path, std::string(own.message()), aside, step);
    RETURN_IF_ERROR(CreateFileAtomically(path, {contents}));
  } else {
    // A folder, a link, a FIFO: it stays where it is, and this save fails naming it.
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": holds something that is not a checkpoint of this run (", own.message(),
        "); it is left in place, so this run cannot save its checkpoint of step ", step,
        " there: move it away, then continue with --resume"));
  }
  // The file just written is this run's state; it is not read back to be judged.
  const auto [size, mtime_ns] = SizeAndTime(path);
  verdicts_[path] = Verdict{.size = size, .mtime_ns = mtime_ns, .usable = absl::OkStatus()};
  newest_saved_step_ = std::max(newest_saved_step_, step);
  return Prune(std::max<int64_t>(keep, 1), run);
}

absl::StatusOr<std::vector<CheckpointFile>> CheckpointStore::List() const {
  std::vector<CheckpointFile> files;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return files;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOf(it->path().filename().string());
    // Not throwing: a link loop or a dangling link named like a checkpoint is passed over.
    std::error_code kind;
    if (step >= 0 && it->is_regular_file(kind) && !kind) files.push_back({step, it->path().string()});
  }
  if (ec) return FileError(dir_, "cannot list the checkpoint folder", ec.value());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.step > b.step; });
  return files;
}

absl::Status CheckpointStore::IsThisRunsCheckpoint(const CheckpointFile& file, const CheckpointExpectations& run) {
  return VerdictOn(file, run).usable;
}

CheckpointStore::Verdict& CheckpointStore::VerdictOn(const CheckpointFile& file, const CheckpointExpectations& run) {
  const auto [size, mtime_ns] = SizeAndTime(file.path);
  Verdict& verdict = verdicts_[file.path];
  if (verdict.size != size || verdict.mtime_ns != mtime_ns) {
    verdict = Verdict{.size = size, .mtime_ns = mtime_ns, .usable = ReadUsableCheckpoint(file, run).status()};
  }
  return verdict;
}

absl::Status CheckpointStore::Prune(int64_t keep, const CheckpointExpectations& run) {
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, List());
  int64_t usable = 0;
  for (const CheckpointFile& file : files) {  // newest first
    Verdict& verdict = VerdictOn(file, run);
    if (!verdict.usable.ok()) {
      if (!verdict.reported) {
        spdlog::warn("{}; not a usable checkpoint of this run, so it is not counted among the {} kept and is left "
                     "in place",
                     std::string(verdict.usable.message()), keep);
        verdict.reported = true;
      }
      continue;
    }
    if (++usable <= keep) continue;
    if (file.step == resumed_from_step_ && newest_saved_step_ <= resumed_from_step_) continue;
    ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(file.path));
    std::error_code ec;
    if (!fs::remove(file.path, ec) && ec) {
      spdlog::warn("{}: cannot delete an old checkpoint: {}", file.path, ec.message());
    }
    verdicts_.erase(file.path);
  }
  return absl::OkStatus();
}

void CheckpointStore::RemoveLeftoverTemporaries() const {
  // Exactly the names WriteFileAtomically gives its temporaries (PATH.tmp.PID.N): no other file.
  static const std::regex kTemporary("ckpt-[0-9]{1,18}\\.bin\\.tmp\\.[0-9]+\\.[0-9]+");
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code rm;
    if (!std::regex_match(it->path().filename().string(), kTemporary) || !it->is_regular_file(rm)) continue;
    if (!HoldFenceFor(it->path().string()).ok()) return;  // fenced out: the folder is another writer's
    fs::remove(it->path(), rm);
    spdlog::info("removed {}, left by an interrupted checkpoint write", it->path().string());
  }
}

absl::StatusOr<LoadedCheckpoint> CheckpointStore::LoadNewestUsable(const CheckpointExpectations& run) const {
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, List());
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat(dir_, ": no checkpoints to resume from (the run stopped before its first ",
                                            "checkpoint, or was written without checkpoints); start it again"));
  }
  LoadedCheckpoint loaded;
  for (const CheckpointFile& file : files) {
    absl::StatusOr<TrainingState> state = ReadUsableCheckpoint(file, run, &loaded.bytes);
    if (state.ok()) {
      loaded.path = file.path;
      loaded.state = *std::move(state);
      return loaded;
    }
    loaded.passed_over.push_back({file.path, std::string(state.status().message())});
  }
  std::vector<std::string> faults;
  for (const PassedOver& p : loaded.passed_over) faults.push_back(p.fault);
  return absl::DataLossError(absl::StrCat("no usable checkpoint in ", dir_, ": ", absl::StrJoin(faults, "; ")));
}

absl::StatusOr<LoadedCheckpoint> CheckpointStore::LoadAtStep(int64_t step, const CheckpointExpectations& run) const {
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, List());
  std::vector<int64_t> steps;
  for (const CheckpointFile& file : files) {
    if (file.step != step) {
      steps.push_back(file.step);
      continue;
    }
    LoadedCheckpoint loaded;
    ASSIGN_OR_RETURN(loaded.state, ReadUsableCheckpoint(file, run, &loaded.bytes));
    loaded.path = file.path;
    return loaded;
  }
  return absl::NotFoundError(absl::StrCat(dir_, " holds no checkpoint of step ", step, "; ",
                                          steps.empty() ? std::string("it holds none")
                                                        : absl::StrCat("it holds steps ", absl::StrJoin(steps, ", "))));
}

}  // namespace gantry
