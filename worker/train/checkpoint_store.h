// The checkpoints of a run folder: RUN/checkpoints/ckpt-<run step>.bin.
//
// Written by rank 0 only, each atomically (a temporary file, fsync, rename, fsync of
// the folder; common/file_io.h), so a crash leaves either the old set of checkpoints or
// the old set plus a complete new one, never a half-written file under a checkpoint's
// name. After each write all but the newest `keep` are deleted. A failed write (disk
// full, folder not writable) is an error naming the path; the checkpoints already there
// are untouched.
//
// Reading walks the checkpoints from the newest: the first one that decodes (magic,
// version, sizes, checksums) and matches the run is used, and each newer one that does
// not is reported with its fault (a torn or corrupt newest checkpoint falls back to the
// one before).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/train/checkpoint_match.h"
#include "worker/train/training_state.h"

namespace gantry {

struct CheckpointFile {
  int64_t step = 0;
  std::string path;
};

// A checkpoint that passed every check, with the faults of the newer ones passed over.
struct LoadedCheckpoint {
  std::string path;
  std::vector<uint8_t> bytes;  // the file as read
  TrainingState state;
  std::vector<std::string> passed_over;  // "<path>: <fault>", newest first
};

class CheckpointStore {
 public:
  // `dir` is the checkpoint folder (RUN/checkpoints); it is created on the first Save.
  explicit CheckpointStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string PathFor(int64_t step) const;

  // Writes `bytes` as the checkpoint of `step` (replacing one of the same step), then
  // deletes all but the newest `keep` (>= 1). A delete that fails is only logged.
  absl::Status Save(int64_t step, std::span<const uint8_t> bytes, int64_t keep) const;

  // The checkpoint files, newest (highest step) first; none when the folder is missing.
  // Other files in the folder (temporaries, notes) are ignored.
  absl::StatusOr<std::vector<CheckpointFile>> List() const;

  // Deletes temporary files that a crash in the middle of Save left behind.
  void RemoveLeftoverTemporaries() const;

  // The newest checkpoint that decodes and matches `run` (see above). NOT_FOUND when
  // there is no checkpoint at all (the run stopped before its first one, or predates
  // checkpoints: starting it again is the remedy); DATA_LOSS listing every file's fault
  // when none is usable.
  absl::StatusOr<LoadedCheckpoint> LoadNewestUsable(const CheckpointExpectations& run) const;

 private:
  absl::Status Prune(int64_t keep) const;
  std::string dir_;
};

}  // namespace gantry
