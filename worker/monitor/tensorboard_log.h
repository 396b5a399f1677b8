// A TensorBoard event file (--tensorboard): scalars and PNG images as Event records in
// TFRecord framing (common/record_file.h), which `tensorboard --logdir RUN/tensorboard`
// reads. The trainer keeps one per batch size, in RUN/tensorboard/bBBBB/, so TensorBoard
// shows the batch sizes of a sweep as runs on the same charts.
//
// Records are buffered and appended to the file (with fsync) by Flush(), which the owner
// calls at epoch ends; TensorBoard reads a file that grows. A resumed run opens a new
// file beside the old one (TensorBoard reads every file of a folder in name order).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

class TensorBoardLog {
 public:
  // Creates `dir` (and its parents) and in it a new event file,
  // events.out.tfevents.<unix seconds>.<host>.<pid>, whose first record is the file
  // version event ("brain.Event:2"), written at once. Errors name the path.
  static absl::StatusOr<TensorBoardLog> Open(const std::string& dir);

  const std::string& path() const { return path_; }

  // Adds a scalar (stored as a float, TensorBoard's simple_value) to the buffer.
  void AddScalar(const std::string& tag, int64_t step, double value);
  // Adds an image summary holding the PNG file `png` (its size and colour type are
  // read from its header); INVALID_ARGUMENT for bytes that are not a PNG.
  absl::Status AddPng(const std::string& tag, int64_t step, const std::string& png);

  // Appends the buffered records to the file and syncs it.
  absl::Status Flush();

 private:
  explicit TensorBoardLog(std::string path) : path_(std::move(path)) {}
  void AddEvent(const std::string& serialized);

  std::string path_;
  std::string pending_;  // framed records not yet in the file
};

// Seconds since the Unix epoch, now: an Event's wall_time.
double UnixSecondsNow();

}  // namespace gantry
