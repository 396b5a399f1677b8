// What rank 0 has to tell the coordinator about the running job and has not had
// acknowledged yet: epoch rows, straggler events, the latest progress, rank timings and
// checkpoint, and at the end the job's final state.
//
// Delivery: Take() copies a batch of the oldest pending items into a report;
// Acknowledge() removes exactly those once the coordinator accepted the report. A
// report that failed is simply taken again later, whole or in part, and the coordinator
// stores a resent row or event once, so nothing is lost or doubled by retries.
//
// Bounds: epoch rows are never dropped (a sweep has few of them). Straggler events are
// bounded by `max_stragglers`: past it the oldest pending one is dropped and counted (a
// flapping rank during a long outage must not grow memory without bound; the run
// folder's stragglers.csv keeps them all). Progress and the checkpoint are only ever the
// latest. A report carries at most `max_items` rows and as many events. The final state
// goes out with (or after) the last row and event. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry {

struct ReportBufferLimits {
  int max_stragglers = 1000;  // pending straggler events kept
  int max_items = 500;        // epoch rows (and, separately, events) per report
};

// A report taken from the buffer: the request's payload (without the group, job and
// attempt, which the sender fills in) and what it covers, for Acknowledge().
struct ReportBatch {
  v1::ReportProgressRequest request;
  uint64_t last_row = 0;        // sequence numbers of the last row and event included
  uint64_t last_straggler = 0;
  uint64_t progress_version = 0;
  uint64_t checkpoint_version = 0;
  bool has_final = false;
  bool empty() const;
};

class ReportBuffer {
 public:
  explicit ReportBuffer(ReportBufferLimits limits = {});

  // With the row, the ranks' timing windows at its end (for the coordinator's epoch planner).
  void AddEpochRow(const v1::EpochMetrics& row, const std::vector<v1::RankTiming>& timings);
  void AddStraggler(const v1::StragglerEvent& event);
  void SetProgress(const v1::Progress& progress);
  // The run folder and newest checkpoint; sent with the next report until acknowledged.
  void SetCheckpoint(const v1::CheckpointRef& checkpoint);
  // The job's end: SUCCEEDED, FAILED (with `error`) or CANCELLED. Set once.
  void SetFinal(v1::JobState state, const std::string& error = "");

  // The oldest pending items, up to the limits; progress and the checkpoint only when
  // they changed since the last acknowledged report. An empty batch when there is nothing to send.
  ReportBatch Take();
  // Removes what `batch` carried (items added since stay pending).
  void Acknowledge(const ReportBatch& batch);

  // Whether rows, a new checkpoint or the final state wait: worth a report now rather
  // than at the next progress interval (a checkpoint the coordinator does not know of
  // cannot be resumed from on another host).
  bool HasUrgent();
  // Nothing waits at all (rows, events, the checkpoint, final state; progress does not
  // count).
  bool Drained();
  bool final_delivered();
  int64_t dropped_stragglers();

 private:
  template <typename T>
  struct Numbered {
    uint64_t seq;
    T item;
  };

  const ReportBufferLimits limits_;
  absl::Mutex mu_;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Numbered<v1::EpochMetrics>> rows_ ABSL_GUARDED_BY(mu_);
  std::deque<Numbered<v1::StragglerEvent>> stragglers_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RankTiming> timings_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::Progress> progress_ ABSL_GUARDED_BY(mu_);
  uint64_t progress_version_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t progress_acked_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<v1::CheckpointRef> checkpoint_ ABSL_GUARDED_BY(mu_);
  uint64_t checkpoint_version_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t checkpoint_acked_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<v1::JobState> final_state_ ABSL_GUARDED_BY(mu_);
  std::string final_error_ ABSL_GUARDED_BY(mu_);
  bool final_delivered_ ABSL_GUARDED_BY(mu_) = false;
  int64_t dropped_stragglers_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace gantry
