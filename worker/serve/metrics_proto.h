// The trainer's measurements as gantry.v1 messages, field for field, so the coordinator
// stores exactly what the run folder holds: `gantry report --csv` prints an EpochRow
// rebuilt from the message with the worker's own EpochCsvLine, which gives the line
// epochs.csv has (every column, the mixed-precision ones included; doubles travel
// unrounded).
#pragma once

#include <cstdint>
#include <vector>

#include "common/straggler_tracker.h"
#include "gantry/v1/metrics.pb.h"
#include "worker/train/epoch_metrics.h"
#include "worker/train/train_observer.h"

namespace gantry {

v1::EpochMetrics ToEpochMetrics(const EpochRow& row);
v1::StragglerEvent ToStragglerEvent(const StragglerEvent& event, int64_t batch_size, int64_t epoch);
v1::Progress ToProgress(const StepProgress& progress);
std::vector<v1::RankTiming> ToRankTimings(const std::vector<RankWindow>& windows);

}  // namespace gantry
