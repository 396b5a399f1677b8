#include "worker/monitor/tensorboard_log.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/host_name.h"
#include "common/record_file.h"
#include "common/status_macros.h"
#include "common/write_fence.h"
#include "tensorboard/event.pb.h"

namespace gantry {
namespace {

constexpr char kFileVersion[] = "brain.Event:2";  // what TensorBoard's own writers put first
constexpr char kPngSignature[] = "\x89PNG\r\n\x1a\n";

uint32_t BigEndian32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

tensorboard::Event NewEvent(int64_t step) {
  tensorboard::Event event;
  event.set_wall_time(UnixSecondsNow());
  event.set_step(step);
  return event;
}

}  // namespace

double UnixSecondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

absl::StatusOr<TensorBoardLog> TensorBoardLog::Open(const std::string& dir) {
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(dir));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create the TensorBoard folder: ", ec.message(),
                                                    "; make the run folder writable or leave out --tensorboard"));
  }
  TensorBoardLog log(absl::StrCat(dir, "/events.out.tfevents.", static_cast<int64_t>(UnixSecondsNow()), ".",
                                  ThisHostName(), ".", ::getpid()));
  tensorboard::Event version = NewEvent(0);
  version.set_file_version(kFileVersion);
  log.AddEvent(version.SerializeAsString());
  if (absl::Status s = log.Flush(); !s.ok()) return s;
  return log;
}

void TensorBoardLog::AddEvent(const std::string& serialized) { AppendRecord(serialized, &pending_); }

void TensorBoardLog::AddScalar(const std::string& tag, int64_t step, double value) {
  tensorboard::Event event = NewEvent(step);
  tensorboard::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  AddEvent(event.SerializeAsString());
}

absl::Status TensorBoardLog::AddPng(const std::string& tag, int64_t step, const std::string& png) {
  // Signature, then the IHDR chunk: length, "IHDR", width, height, bit depth, colour type.
  if (png.size() < 33 || png.compare(0, 8, kPngSignature, 8) != 0 || png.compare(12, 4, "IHDR") != 0) {
    return absl::InvalidArgumentError(absl::StrCat("TensorBoard image ", tag, ": the bytes are not a PNG file"));
  }
  const uint8_t color_type = static_cast<uint8_t>(png[25]);
  // TensorBoard's colorspace: 1 grayscale, 2 grayscale+alpha, 3 RGB, 4 RGBA.
  const int colorspace = color_type == 0 ? 1 : color_type == 4 ? 2 : color_type == 6 ? 4 : 3;
  tensorboard::Event event = NewEvent(step);
  tensorboard::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  tensorboard::Summary::Image* image = v->mutable_image();
  image->set_width(static_cast<int32_t>(BigEndian32(png, 16)));
  image->set_height(static_cast<int32_t>(BigEndian32(png, 20)));
  image->set_colorspace(colorspace);
  image->set_encoded_image_string(png);
  AddEvent(event.SerializeAsString());
  return absl::OkStatus();
}

absl::Status TensorBoardLog::Flush() {
  if (pending_.empty()) return absl::OkStatus();
  absl::Status s = AppendAndSync(path_, pending_);
  if (s.ok()) pending_.clear();
  return s;
}

}  // namespace gantry
