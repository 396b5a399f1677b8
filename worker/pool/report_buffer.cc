#include "worker/pool/report_buffer.h"

#include <algorithm>

#include "common/check.h"

namespace gantry {

bool ReportBatch::empty() const {
  return request.epochs_size() == 0 && request.stragglers_size() == 0 && !request.has_progress() &&
         !request.has_checkpoint() && !has_final;
}

ReportBuffer::ReportBuffer(ReportBufferLimits limits) : limits_(limits) {
  CHECK(limits.max_stragglers >= 1 && limits.max_items >= 1) << "report buffer limits";
}

void ReportBuffer::AddEpochRow(const v1::EpochMetrics& row, const std::vector<v1::RankTiming>& timings) {
  absl::MutexLock lock(&mu_);
  rows_.push_back({next_seq_++, row});
  timings_ = timings;
}

void ReportBuffer::AddStraggler(const v1::StragglerEvent& event) {
  absl::MutexLock lock(&mu_);
  stragglers_.push_back({next_seq_++, event});
  while (stragglers_.size() > static_cast<size_t>(limits_.max_stragglers)) {
    stragglers_.pop_front();
    ++dropped_stragglers_;
  }
}

void ReportBuffer::SetProgress(const v1::Progress& progress) {
  absl::MutexLock lock(&mu_);
  progress_ = progress;
  ++progress_version_;
}

void ReportBuffer::SetCheckpoint(const v1::CheckpointRef& checkpoint) {
  absl::MutexLock lock(&mu_);
  checkpoint_ = checkpoint;
  ++checkpoint_version_;
}

void ReportBuffer::SetFinal(v1::JobState state, const std::string& error) {
  absl::MutexLock lock(&mu_);
  CHECK(!final_state_.has_value()) << "the final state is set once";
  final_state_ = state;
  final_error_ = error;
}

ReportBatch ReportBuffer::Take() {
  absl::MutexLock lock(&mu_);
  ReportBatch batch;
  const size_t max_items = static_cast<size_t>(limits_.max_items);
  const size_t rows = std::min(rows_.size(), max_items);
  for (size_t i = 0; i < rows; ++i) *batch.request.add_epochs() = rows_[i].item;
  if (rows > 0) {
    batch.last_row = rows_[rows - 1].seq;
    for (const v1::RankTiming& t : timings_) *batch.request.add_rank_timings() = t;
  }
  const size_t events = std::min(stragglers_.size(), max_items);
  for (size_t i = 0; i < events; ++i) *batch.request.add_stragglers() = stragglers_[i].item;
  if (events > 0) batch.last_straggler = stragglers_[events - 1].seq;
  if (progress_.has_value() && progress_version_ > progress_acked_) {
    *batch.request.mutable_progress() = *progress_;
    batch.progress_version = progress_version_;
  }
  if (checkpoint_.has_value() && checkpoint_version_ > checkpoint_acked_) {
    *batch.request.mutable_checkpoint() = *checkpoint_;
    batch.checkpoint_version = checkpoint_version_;
  }
  const bool everything_else = rows == rows_.size() && events == stragglers_.size();
  if (final_state_.has_value() && !final_delivered_ && everything_else) {
    batch.request.set_final_state(*final_state_);
    batch.request.set_error(final_error_);
    batch.has_final = true;
  }
  return batch;
}

void ReportBuffer::Acknowledge(const ReportBatch& batch) {
  absl::MutexLock lock(&mu_);
  while (!rows_.empty() && rows_.front().seq <= batch.last_row) rows_.pop_front();
  while (!stragglers_.empty() && stragglers_.front().seq <= batch.last_straggler) stragglers_.pop_front();
  progress_acked_ = std::max(progress_acked_, batch.progress_version);
  checkpoint_acked_ = std::max(checkpoint_acked_, batch.checkpoint_version);
  if (batch.has_final) final_delivered_ = true;
}

bool ReportBuffer::HasUrgent() {
  absl::MutexLock lock(&mu_);
  return !rows_.empty() || checkpoint_version_ > checkpoint_acked_ || (final_state_.has_value() && !final_delivered_);
}

bool ReportBuffer::Drained() {
  absl::MutexLock lock(&mu_);
  return rows_.empty() && stragglers_.empty() && checkpoint_version_ <= checkpoint_acked_ &&
         (!final_state_.has_value() || final_delivered_);
}

bool ReportBuffer::final_delivered() {
  absl::MutexLock lock(&mu_);
  return final_delivered_;
}

int64_t ReportBuffer::dropped_stragglers() {
  absl::MutexLock lock(&mu_);
  return dropped_stragglers_;
}

}  // namespace gantry
