#include "worker/monitor/tensorboard_log.h"

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/write_fence.h"
#include "gtest/gtest.h"
#include "tensorboard/event.pb.h"
#include "tests/testing/png_decode.h"
#include "tests/testing/tensorboard_events.h"
#include "worker/formats/png_encode.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

using testing_tensorboard::ReadEvents;

TEST(TensorBoardLog, WritesScalarsAndAPngImageTensorBoardCanRead) {
  const std::string dir = ::testing::TempDir() + "/tb_log/b64";
  fs::remove_all(::testing::TempDir() + "/tb_log");
  absl::StatusOr<TensorBoardLog> log = TensorBoardLog::Open(dir);
  ASSERT_TRUE(log.ok()) << log.status();
  // The version record is in the file at once, before any Flush.
  EXPECT_EQ(ReadEvents(dir).size(), 1u);

  const double before = UnixSecondsNow();
  log->AddScalar("loss/d", 1, 0.6931);
  log->AddScalar("loss/g", 1, 1.25);
  log->AddScalar("loss/d", 2, 0.5);
  std::vector<uint8_t> pixels(5 * 3 * 3, 0);
  pixels[0] = 255;  // one red pixel, top-left
  absl::StatusOr<std::string> png = EncodePng(pixels, 5, 3, 3);
  ASSERT_TRUE(png.ok()) << png.status();
  ASSERT_TRUE(log->AddPng("samples", 2, *png).ok());
  EXPECT_FALSE(log->AddPng("samples", 2, "not a png at all, not even close to one").ok());
  ASSERT_TRUE(log->Flush().ok());

  const std::vector<tensorboard::Event> events = ReadEvents(dir);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  for (const tensorboard::Event& e : events) {
    EXPECT_GE(e.wall_time(), before - 3600);  // Unix seconds, not a monotonic clock
    EXPECT_LE(e.wall_time(), UnixSecondsNow() + 1);
  }
  struct Expected {
    std::string tag;
    int64_t step;
    float value;
  };
  const std::vector<Expected> scalars = {{"loss/d", 1, 0.6931f}, {"loss/g", 1, 1.25f}, {"loss/d", 2, 0.5f}};
  for (size_t i = 0; i < scalars.size(); ++i) {
    const tensorboard::Event& e = events[i + 1];
    ASSERT_TRUE(e.has_summary());
    ASSERT_EQ(e.summary().value_size(), 1);
    EXPECT_EQ(e.step(), scalars[i].step);
    EXPECT_EQ(e.summary().value(0).tag(), scalars[i].tag);
    EXPECT_EQ(e.summary().value(0).simple_value(), scalars[i].value);
  }
  const tensorboard::Summary::Value& image = events[4].summary().value(0);
  EXPECT_EQ(events[4].step(), 2);
  EXPECT_EQ(image.tag(), "samples");
  ASSERT_TRUE(image.has_image());
  EXPECT_EQ(image.image().width(), 5);
  EXPECT_EQ(image.image().height(), 3);
  EXPECT_EQ(image.image().colorspace(), 3);
  const std::optional<testing_png::Decoded> back = testing_png::DecodeRgb(image.image().encoded_image_string());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rgb, pixels);
}

TEST(TensorBoardLog, FieldNumbersAreTensorBoards) {
  // What TensorBoard's own event.proto and summary.proto say; a renumbering here would
  // make files TensorBoard cannot read.
  const auto* event = tensorboard::Event::descriptor();
  EXPECT_EQ(event->FindFieldByName("wall_time")->number(), 1);
  EXPECT_EQ(event->FindFieldByName("step")->number(), 2);
  EXPECT_EQ(event->FindFieldByName("file_version")->number(), 3);
  EXPECT_EQ(event->FindFieldByName("summary")->number(), 5);
  EXPECT_EQ(tensorboard::Summary::descriptor()->FindFieldByName("value")->number(), 1);
  const auto* value = tensorboard::Summary::Value::descriptor();
  EXPECT_EQ(value->FindFieldByName("tag")->number(), 1);
  EXPECT_EQ(value->FindFieldByName("simple_value")->number(), 2);
  EXPECT_EQ(value->FindFieldByName("image")->number(), 4);
  const auto* image = tensorboard::Summary::Image::descriptor();
  EXPECT_EQ(image->FindFieldByName("height")->number(), 1);
  EXPECT_EQ(image->FindFieldByName("width")->number(), 2);
  EXPECT_EQ(image->FindFieldByName("colorspace")->number(), 3);
  EXPECT_EQ(image->FindFieldByName("encoded_image_string")->number(), 4);
}

TEST(TensorBoardLog, AnUncreatableFolderIsNamed) {
  const std::string file = ::testing::TempDir() + "/tb_not_a_folder";
  ASSERT_TRUE(WriteFileAtomically(file, "x").ok());
  absl::StatusOr<TensorBoardLog> log = TensorBoardLog::Open(file + "/b64");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(file), std::string::npos) << log.status();
}

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

// In a run folder a later attempt claimed (write_fence.h): no folder, no event file.
TEST(TensorBoardLog, AFencedOutRunWritesNoEvents) {
  const std::string run = ::testing::TempDir() + "/tensorboard_fenced";
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  ASSERT_TRUE(ClaimFence(run, {.epoch = 1, .holder = "attempt 1"}, 1).ok());
  FencedFolder fence(run, {.epoch = 1, .holder = "attempt 1"});
  absl::StatusOr<TensorBoardLog> log = TensorBoardLog::Open(run + "/tensorboard/b0008");
  ASSERT_TRUE(log.ok()) << log.status();
  log->AddScalar("loss/d", 1, 0.5);
  ASSERT_TRUE(log->Flush().ok());
  const auto size_of_events = [&] {
    uintmax_t bytes = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(run + "/tensorboard")) {
      if (e.is_regular_file()) bytes += e.file_size();
    }
    return bytes;
  };
  const uintmax_t before = size_of_events();
  ASSERT_TRUE(ClaimFence(run, {.epoch = 2, .holder = "attempt 2"}, 1).ok());
  log->AddScalar("loss/d", 2, 0.25);
  EXPECT_TRUE(absl::IsAborted(log->Flush()));
  EXPECT_EQ(size_of_events(), before);
  const absl::StatusOr<TensorBoardLog> next = TensorBoardLog::Open(run + "/tensorboard/b0016");
  EXPECT_TRUE(absl::IsAborted(next.status())) << next.status();
  EXPECT_FALSE(std::filesystem::exists(run + "/tensorboard/b0016"));
}

}  // namespace
}  // namespace gantry
