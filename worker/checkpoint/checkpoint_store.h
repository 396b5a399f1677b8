// The checkpoints of a run folder: RUN/checkpoints/ckpt-<run step>.bin.
//
// Written by rank 0 only, each atomically (a temporary file, fsync, rename, fsync of
// the folder; common/file_io.h), so a crash leaves either the old set of checkpoints or
// the old set plus a complete new one, never a half-written file under a checkpoint's
// name. A failed write (disk full, folder not writable) is an error naming the path; the
// checkpoints already there are untouched.
//
// A checkpoint is *usable* for a run when it reads, decodes (magic, version, sizes,
// checksums), matches the run (CheckMatchesRun) and was saved at the step its name says.
// Reading walks the checkpoints from the newest: the first usable one is used, and each
// newer one that is not is reported with its fault (a torn or corrupt newest checkpoint
// falls back to the one before). Pruning after each write counts only usable ones, so a
// damaged or foreign file named like a checkpoint never pushes a good one out: of the
// usable checkpoints the newest `keep` stay and older ones are deleted; files that are
// not usable are left alone (logged once), and the checkpoint a run resumed from is
// kept until the run has saved a newer one.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/checkpoint/checkpoint_match.h"
#include "worker/checkpoint/training_state.h"

namespace gantry {

// The largest checkpoint file read: a Pix2Pix at the settings table's limits with Adam is
// below it; a larger file (a sparse or mistaken one) is refused by name before it is read.
inline constexpr size_t kMaxCheckpointBytes = size_t{64} << 30;

struct CheckpointFile {
  int64_t step = 0;
  std::string path;
};

// A checkpoint file that is not usable, and why.
struct PassedOver {
  std::string path;
  std::string fault;  // the error's message, which starts with the path
};

// A checkpoint that passed every check, with the faults of the newer ones passed over.
struct LoadedCheckpoint {
  std::string path;
  std::vector<uint8_t> bytes;  // the file as read
  TrainingState state;
  std::vector<PassedOver> passed_over;  // newest first
};

class CheckpointStore {
 public:
  // `dir` is the checkpoint folder (RUN/checkpoints); it is created on the first Save.
  explicit CheckpointStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string PathFor(int64_t step) const;

  // Writes `bytes` (a checkpoint of `run` at `step`) as the checkpoint of `step`, then
  // deletes the usable checkpoints of `run` older than the newest `keep` (>= 1), as
  // above. A file already under that name is replaced only when it is a usable checkpoint
  // of `run` (its own state of that step). A regular file that is not (another model's
  // checkpoint, a damaged copy) is renamed aside to NAME.not-this-run (then
  // .not-this-run.1, ...; never over an existing file), logged, and kept byte for byte;
  // anything else there (a folder, a link, a FIFO) is left in place and the save fails
  // naming it (FAILED_PRECONDITION). A delete that fails is only logged.
  absl::Status Save(int64_t step, std::span<const uint8_t> bytes, int64_t keep, const CheckpointExpectations& run);

  // The checkpoint at `step` is the one the run resumed from: pruning keeps it until
  // this store has saved a newer one.
  void KeepResumedFrom(int64_t step) { resumed_from_step_ = step; }

  // The checkpoint files, newest (highest step) first; none when the folder is missing.
  // Other files in the folder (temporaries, notes) are ignored.
  absl::StatusOr<std::vector<CheckpointFile>> List() const;

  // Deletes temporary files that a crash in the middle of Save left behind.
  void RemoveLeftoverTemporaries() const;

  // The newest usable checkpoint of `run` (see above). NOT_FOUND when there is no
  // checkpoint at all (the run stopped before its first one, or predates checkpoints:
  // starting it again is the remedy); DATA_LOSS listing every file's fault when none is
  // usable.
  absl::StatusOr<LoadedCheckpoint> LoadNewestUsable(const CheckpointExpectations& run) const;

  // The checkpoint of run step `step` when it is usable for `run`. NOT_FOUND listing the
  // steps there are when there is none of that step; its fault when it is not usable.
  absl::StatusOr<LoadedCheckpoint> LoadAtStep(int64_t step, const CheckpointExpectations& run) const;

 private:
  // What pruning knows of a file, valid while its size and modification time stay.
  struct Verdict {
    int64_t size = -1;
    int64_t mtime_ns = -1;
    absl::Status usable;
    bool reported = false;  // its fault was logged
  };
  absl::Status Prune(int64_t keep, const CheckpointExpectations& run);
  // OK when `file` is a usable checkpoint of `run` (this store wrote it, or a usable one of
  // the run's is there), else its fault.
  absl::Status IsThisRunsCheckpoint(const CheckpointFile& file, const CheckpointExpectations& run);
  // The verdict on `file`, from the cache when the file is unchanged since.
  Verdict& VerdictOn(const CheckpointFile& file, const CheckpointExpectations& run);

  std::string dir_;
  std::map<std::string, Verdict> verdicts_;  // by path
  int64_t resumed_from_step_ = -1;
  int64_t newest_saved_step_ = -1;
};

// The state in `file` when it is a usable checkpoint of `run` (see above), else its fault
// (the message starts with the path); `bytes`, when given, gets the file as read.
absl::StatusOr<TrainingState> ReadUsableCheckpoint(const CheckpointFile& file, const CheckpointExpectations& run,
                                                   std::vector<uint8_t>* bytes = nullptr);

}  // namespace gantry
