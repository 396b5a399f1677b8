// The trainer's measurements as gantry.v1 messages, field for field (epoch rows:
// report/epoch_row_proto.h), so the coordinator stores exactly what the run folder holds.
#pragma once

#include <cstdint>
#include <vector>

#include "common/straggler_tracker.h"
#include "gantry/v1/metrics.pb.h"
#include "report/epoch_metrics.h"
#include "report/epoch_row_proto.h"
#include "worker/train/train_observer.h"

namespace gantry {

v1::StragglerEvent ToStragglerEvent(const StragglerEvent& event, int64_t batch_size, int64_t epoch);
v1::Progress ToProgress(const StepProgress& progress);
std::vector<v1::RankTiming> ToRankTimings(const std::vector<RankWindow>& windows);

}  // namespace gantry
