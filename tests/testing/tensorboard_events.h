// Reads back TensorBoard event files in tests: every record's CRCs checked by
// ReadRecords, each record parsed with the parser generated from TensorBoard's own
// proto definitions (proto/tensorboard/event.proto).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/record_file.h"
#include "gtest/gtest.h"
#include "tensorboard/event.pb.h"

namespace gantry::testing_tensorboard {

// Every event of the one event file in `dir` (a test failure when there is not exactly
// one, or a record does not parse).
inline std::vector<tensorboard::Event> ReadEvents(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  EXPECT_EQ(files.size(), 1u) << dir;
  if (files.size() != 1) return {};
  EXPECT_EQ(std::filesystem::path(files[0]).filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(files[0]);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return {};
  absl::StatusOr<std::vector<std::string>> records = ReadRecords(*bytes, files[0]);
  EXPECT_TRUE(records.ok()) << records.status();
  if (!records.ok()) return {};
  std::vector<tensorboard::Event> events;
  for (const std::string& r : *records) {
    tensorboard::Event e;
    EXPECT_TRUE(e.ParseFromString(r));
    events.push_back(e);
  }
  return events;
}

// Each scalar's values by tag, in file order.
inline std::map<std::string, std::vector<float>> ScalarsByTag(const std::vector<tensorboard::Event>& events) {
  std::map<std::string, std::vector<float>> scalars;
  for (const tensorboard::Event& e : events) {
    for (const auto& v : e.summary().value()) {
      if (v.value_case() == tensorboard::Summary::Value::kSimpleValue) scalars[v.tag()].push_back(v.simple_value());
    }
  }
  return scalars;
}

}  // namespace gantry::testing_tensorboard
