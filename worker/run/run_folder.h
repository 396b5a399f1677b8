// The run folder every training run writes:
//   run.json               resolved configuration, versions, host
//   epochs.csv             one row per (batch size, epoch), see epoch_metrics.h
//   samples/epoch_NNN.png  8x8 grid of G(fixed noise) after epoch NNN
//   samples/epoch_NNN.npy  the same 64 images, float32 [64,1,28,28] in [-1,1]
//   timing.png, losses.png plots drawn at the end (run_plots.h)
//   tensorboard/bBBBB/     with --tensorboard: event files (tensorboard_log.h)
//   log.txt                the run's log
//   stragglers.csv         one row per straggler event (only when there was one)
//   timing.md              per-batch-size timing summary, written at the end
//   checkpoints/           ckpt-<step>.bin, the newest few (checkpoint_store.h)
//   fence.txt              a pool job's: the attempt that owns the folder (below)
// A sweep over several batch sizes puts its samples under samples/bBBBB/ instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/straggler_tracker.h"
#include "common/write_fence.h"
#include "report/epoch_metrics.h"

namespace gantry {

// A pool job's claim of its run folder: the job's attempt is the fencing epoch
// (write_fence.h). An attempt that continues an earlier attempt's folder claims it first,
// then waits up to `lock_wait_seconds` for the earlier attempt's process to let go of the
// folder's lock (it stops at its next step once it sees the claim); from then on, every
// write of the folder by a lower attempt fails with ABORTED and writes nothing.
struct RunFolderClaim {
  FenceToken token;
  double lock_wait_seconds = 30;
};

// Why a writer of fencing epoch `epoch` may no longer write `folder` (its fence file holds
// a later epoch, named with its holder), or "" while it may. Reads the fence file.
std::string FencedOutReason(const std::string& folder, int64_t epoch);

class RunFolder {
 public:
  // Creates `path` (and samples/), or fails with a message naming the path and the fix:
  // not creatable, not writable, already holding a run (an epochs.csv or checkpoints),
  // which is never overwritten, or holding anything that is not a run's (someone's
  // files: a new run goes into a new folder, an empty one, or one a run started in), or
  // an entry with a run's name that is not of its kind (a folder named log.txt, a FIFO,
  // a link). The writability probe is a file of its own, never one that is there.
  // One process writes a run folder at a time: Create and Open take an exclusive flock(2)
  // on the folder itself, held while any copy of the RunFolder lives (so by the run, to
  // its end) and released by the kernel however the process ends. Another process's run
  // there (two `train --out X` at once, a resume racing a run) is refused:
  // FAILED_PRECONDITION naming the folder. A filesystem without flock on folders runs
  // without the lock.
  // With `claim`, the new folder is fenced for it once locked.
  static absl::StatusOr<RunFolder> Create(const std::string& path, const RunFolderClaim* claim = nullptr);

  // An existing run folder, to resume: NOT_FOUND naming the path when it holds no
  // run.json (not a run folder), PERMISSION_DENIED when it is not writable,
  // FAILED_PRECONDITION naming an entry with a run's name that is not of its kind.
  // With `claim`: FAILED_PRECONDITION when a later attempt holds the fence; the lock is
  // waited for (see RunFolderClaim) instead of refused at once.
  static absl::StatusOr<RunFolder> Open(const std::string& path, const RunFolderClaim* claim = nullptr);

  // The fence this folder is written under (null: none, not a pool job's).
  const std::shared_ptr<FencedFolder>& fence() const { return fence_; }

  const std::string& path() const { return path_; }
  std::string CheckpointDir() const { return File("checkpoints"); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes run.json atomically.
  absl::Status WriteRunJson(const std::string& json_text) const;
  // Appends a row to epochs.csv (header first when the file is new) and syncs it to
  // disk, so a crash loses at most the epoch in flight.
  absl::Status AppendEpochRow(const EpochRow& row) const;
  // Makes epochs.csv hold exactly `rows` and stragglers.csv exactly `straggler_rows`
  // (lines without the header; empty: no file), each replaced atomically. On resume this
  // drops the rows written after the checkpoint, so none is doubled when the steps after
  // it run again.
  absl::Status ResetRows(const std::vector<EpochRow>& rows, const std::string& straggler_rows) const;
  // Appends a row to stragglers.csv (header first when the file is new).
  absl::Status AppendStragglerRow(const StragglerEvent& event, int64_t batch_size, int64_t epoch) const;
  // Path of a sample file ("png" or "npy") for `epoch`; `sweep` selects the per-batch
  // subfolder, creating it.
  absl::StatusOr<std::string> SamplePath(int64_t batch_size, bool sweep, int64_t epoch,
                                         const std::string& extension) const;

 private:
  RunFolder(std::string path, std::shared_ptr<const int> lock) : path_(std::move(path)), lock_(std::move(lock)) {}
  // Claims the fence for `claim` and registers it (FencedFolder) for this folder's life.
  absl::Status Fence(const RunFolderClaim& claim);

  std::string path_;
  std::shared_ptr<const int> lock_;  // the folder's descriptor holding the flock; closed by the last copy
  std::shared_ptr<FencedFolder> fence_;  // registered while any copy lives (unregistered before the unlock)
};

}  // namespace gantry
