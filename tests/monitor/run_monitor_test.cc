// Rank 0's monitor: each epoch's row reaches TensorBoard as scalars (the quality score,
// the flow validation and the energy included), read back with the parser generated
// from TensorBoard's proto definitions; the energy columns say where the figure came from.
#include "worker/monitor/run_monitor.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/energy_source.h"
#include "tests/testing/tensorboard_events.h"
#include "worker/formats/png_encode.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::Pair;

// A row with every column set: scored, validated, energy measured.
EpochRow FullRow() {
  EpochRow row;
  row.batch_size = 64;
  row.epoch = 2;
  row.steps = 10;
  row.seconds = 12.5;
  row.samples_per_s = 512;
  row.d_loss = 0.75;
  row.g_loss = 1.5;
  row.step_p99_ms = 40;
  row.energy_j = 640;
  row.energy_j_per_sample = 1;
  row.energy_source = static_cast<int>(EnergySource::kNvml);
  row.quality_fd = 3.25;
  row.quality_class_entropy = 0.5;
  row.quality_marginal_entropy = 2.25;
  row.quality_confidence = 0.875;
  row.val_l1 = 0.125;
  row.val_rel_l2 = 0.25;
  row.quality_kid = 0.0625;
  return row;
}

std::map<std::string, double> AsMap(const std::vector<std::pair<std::string, double>>& scalars) {
  return {scalars.begin(), scalars.end()};
}

TEST(EpochScalars, EveryColumnIsAScalarOrAKeyOfTheRow) {
  // A new epochs.csv column becomes a scalar on its own; the keys and labels stay out.
  const std::set<std::string> labels = {"batch_size", "epoch", "world_size", "energy_estimated", "energy_source"};
  const std::map<std::string, double> scalars = AsMap(EpochScalars(FullRow(), /*validated=*/true));
  for (const EpochColumn& column : EpochColumns()) {
    const std::string tag = std::string("epoch/") + column.name;
    EXPECT_EQ(scalars.contains(tag), !labels.contains(column.name)) << column.name;
  }
  EXPECT_EQ(scalars.at("epoch/quality_fd"), 3.25);
  EXPECT_EQ(scalars.at("epoch/quality_confidence"), 0.875);
  EXPECT_EQ(scalars.at("epoch/quality_kid"), 0.0625);
  EXPECT_EQ(scalars.at("epoch/val_rel_l2"), 0.25);
  EXPECT_EQ(scalars.at("epoch/energy_j"), 640);
  EXPECT_EQ(scalars.at("epoch/seconds"), 12.5);
}

TEST(EpochScalars, WhatAnEpochDidNotMeasureIsLeftOut) {
  EpochRow row = FullRow();
  row.quality_fd = row.quality_class_entropy = row.quality_marginal_entropy = row.quality_confidence = -1;
  row.val_l1 = row.val_rel_l2 = 0;
  row.energy_j = row.energy_j_per_sample = 0;
  row.energy_source = static_cast<int>(EnergySource::kNone);
  const std::map<std::string, double> scalars = AsMap(EpochScalars(row, /*validated=*/false));
  for (const auto& [tag, value] : scalars) {
    EXPECT_FALSE(tag.starts_with("epoch/quality_") || tag.starts_with("epoch/val_") ||
                 tag.starts_with("epoch/energy_"))
        << tag;
  }
  EXPECT_TRUE(scalars.contains("epoch/d_loss"));
}

TEST(EpochScalars, AJudgesEpochHasNoKidScalar) {
  EpochRow row = FullRow();
  row.quality_kid = std::numeric_limits<double>::quiet_NaN();  // scored by the judge only
  const std::map<std::string, double> scalars = AsMap(EpochScalars(row, /*validated=*/true));
  EXPECT_FALSE(scalars.contains("epoch/quality_kid"));
  EXPECT_EQ(scalars.at("epoch/quality_fd"), 3.25);
}

TEST(RunMonitor, TensorBoardGetsTheEpochsQualityValidationAndEnergy) {
  const std::string root = ::testing::TempDir() + "/run_monitor_tb";
  fs::remove_all(root);
  absl::StatusOr<RunFolder> folder = RunFolder::Create(root + "/run");
  ASSERT_TRUE(folder.ok()) << folder.status();
  TrainConfig config;
  config.tensorboard = true;
  config.watts_per_core = 10;
  RunMonitor monitor(config, *folder, root + "/no_powercap");  // no RAPL: the estimate
  ASSERT_TRUE(monitor.StartBatchSize(64).ok());

  const std::vector<uint8_t> grey(4 * 4, 128);
  absl::StatusOr<std::string> png = EncodePng(grey, 4, 4, 1);
  ASSERT_TRUE(png.ok());
  const std::string png_path = root + "/grid.png";
  ASSERT_TRUE(WriteFileAtomically(png_path, *png).ok());

  // Epoch 1: unscored and unmeasured GPU (NaN): the estimate. Epoch 2: scored, validated,
  // and the GPUs counted.
  EpochRow first = FullRow();
  first.epoch = 1;
  first.quality_fd = first.quality_class_entropy = first.quality_marginal_entropy = first.quality_confidence = -1;
  monitor.StartEpoch();
  monitor.AddEnergy(/*cpu_seconds=*/3.0, /*gpu_joules=*/std::nan(""), first);
  EXPECT_EQ(first.energy_source, static_cast<int>(EnergySource::kEstimate));
  EXPECT_EQ(first.energy_estimated, 1);
  EXPECT_EQ(first.energy_j, 30.0);
  EXPECT_EQ(first.energy_j_per_sample, 30.0 / 640);
  ASSERT_TRUE(monitor.OnEpochDone(first, 10, png_path, /*validated=*/true).ok());

  monitor.CountGpus("NVML GPU 0000:3B:00.0 (rank 0)");
  EpochRow second = FullRow();
  monitor.StartEpoch();
  monitor.AddEnergy(3.0, 160.0, second);
  EXPECT_EQ(second.energy_source, static_cast<int>(EnergySource::kNvml));
  EXPECT_EQ(second.energy_estimated, 0);
  EXPECT_EQ(second.energy_j, 160.0);
  ASSERT_TRUE(monitor.OnEpochDone(second, 20, png_path, /*validated=*/true).ok());

  const std::vector<tensorboard::Event> events = testing_tensorboard::ReadEvents(root + "/run/tensorboard/b64");
  std::map<std::string, std::vector<std::pair<int64_t, float>>> by_tag;
  for (const tensorboard::Event& e : events) {
    for (const auto& v : e.summary().value()) {
      if (v.value_case() == tensorboard::Summary::Value::kSimpleValue) by_tag[v.tag()].push_back({e.step(), v.simple_value()});
    }
  }
  EXPECT_THAT(by_tag["epoch/quality_fd"], ElementsAre(Pair(20, 3.25f)));  // epoch 1 was not scored
  EXPECT_THAT(by_tag["epoch/quality_class_entropy"], ElementsAre(Pair(20, 0.5f)));
  EXPECT_THAT(by_tag["epoch/quality_marginal_entropy"], ElementsAre(Pair(20, 2.25f)));
  EXPECT_THAT(by_tag["epoch/quality_confidence"], ElementsAre(Pair(20, 0.875f)));
  EXPECT_THAT(by_tag["epoch/val_l1"], ElementsAre(Pair(10, 0.125f), Pair(20, 0.125f)));
  EXPECT_THAT(by_tag["epoch/val_rel_l2"], ElementsAre(Pair(10, 0.25f), Pair(20, 0.25f)));
  EXPECT_THAT(by_tag["epoch/energy_j"], ElementsAre(Pair(10, 30.0f), Pair(20, 160.0f)));
  EXPECT_THAT(by_tag["epoch/energy_j_per_sample"], ElementsAre(Pair(10, 30.0f / 640), Pair(20, 0.25f)));
  EXPECT_THAT(by_tag["epoch/seconds"], ElementsAre(Pair(10, 12.5f), Pair(20, 12.5f)));
  EXPECT_FALSE(by_tag.contains("epoch/energy_source"));
  EXPECT_FALSE(by_tag.contains("epoch/batch_size"));
}

}  // namespace
}  // namespace gantry
