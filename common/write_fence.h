// Fencing a folder that two processes may each believe they own. A worker group that is
// cut off from the coordinator for longer than its lease keeps training; meanwhile the
// coordinator gives its job to another group, which continues in the same run folder
// (on storage both see). The old group cannot know that from the coordinator (it cannot
// reach it), so the folder says it: a fence file holding a fencing epoch, the highest
// that has claimed the folder (for a pool job, the job's attempt number, which only the
// coordinator hands out and which only grows). A writer that registered epoch E checks
// the fence before every write under the folder; once the file holds another epoch, that
// write and every later one fail with ABORTED naming the new holder, and the writer has
// written nothing more.
//
// Races. A check and its write run under a shared flock(2) of the fence file, and a
// claim writes the file under an exclusive one: a write either ends before the new
// epoch is in the file or sees it. flock works between processes of one machine and, on
// Linux, over NFS (as a whole-file POSIX lock). A write that does not go through
// HoldFenceFor (file_io.h's writers do) is not fenced.
//
// Registrations are process-wide (FencedFolder): file_io.h's writers and the run folder's
// own (mkdir, remove) ask HoldFenceFor(path), which is free while nothing is registered.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// The name of the fence file inside the fenced folder.
inline constexpr char kFenceFileName[] = "fence.txt";

struct FenceToken {
  int64_t epoch = 0;   // > 0; a claim needs one higher than the file's
  std::string holder;  // who, for messages ("job j-1 attempt 2, group g-2 on host h (pid 7)")
};

// The token in `folder`'s fence file; epoch 0 when there is no file or it cannot be read.
FenceToken ReadFence(const std::string& folder);

// Writes `token` into `folder`'s fence file, waiting up to `wait_seconds` for writes in
// flight under the old token to end. FAILED_PRECONDITION naming the holder when the
// file already holds a higher epoch, or this one for another holder (this claimant is
// the stale one; the same token again is a retry and succeeds);
// UNAVAILABLE when the wait runs out; the file error otherwise.
absl::Status ClaimFence(const std::string& folder, const FenceToken& token, double wait_seconds);

// A shared hold of a fence across one write (or none: a path under no registered fence).
// Move-only; released when destroyed.
class FenceHold {
 public:
  FenceHold() = default;
  explicit FenceHold(int fd) : fd_(fd) {}
  FenceHold(FenceHold&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FenceHold& operator=(FenceHold&& other) noexcept;
  FenceHold(const FenceHold&) = delete;
  FenceHold& operator=(const FenceHold&) = delete;
  ~FenceHold();
  bool holds() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// While it lives, every write under `folder` through HoldFenceFor is checked against
// `token`. The first failed check is kept: a fenced writer stays fenced. Thread-safe.
class FencedFolder {
 public:
  // Registers `folder` (made absolute and normal) for `token`; at most one registration
  // per folder at a time.
  FencedFolder(const std::string& folder, FenceToken token);
  ~FencedFolder();
  FencedFolder(const FencedFolder&) = delete;
  FencedFolder& operator=(const FencedFolder&) = delete;

  const std::string& folder() const { return folder_; }
  const FenceToken& token() const { return token_; }
  // OK while the fence file still holds this token's epoch; ABORTED naming the new
  // holder once it does not (kept from then on). Reads the file.
  absl::Status Check();
  // Check, then a shared hold of the fence file until the returned hold dies.
  absl::StatusOr<FenceHold> Hold();

 private:
  const std::string folder_;
  const FenceToken token_;
  struct State;
  std::unique_ptr<State> state_;
};

// A hold for a write of `path`: empty when `path` lies under no registered folder;
// otherwise that folder's Hold(). Cheap while nothing is registered.
absl::StatusOr<FenceHold> HoldFenceFor(const std::string& path);

}  // namespace gantry
