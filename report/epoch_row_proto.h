// EpochRow <-> gantry.v1.EpochMetrics, column by column (EpochColumns(): each column's
// field has its name), so the coordinator stores exactly what the run folder holds and
// `gantry report --csv` prints the bytes of epochs.csv (doubles travel unrounded).
#pragma once

#include "gantry/v1/metrics.pb.h"
#include "report/epoch_metrics.h"

namespace gantry {

v1::EpochMetrics ToEpochMetrics(const EpochRow& row);
EpochRow FromEpochMetrics(const v1::EpochMetrics& metrics);

}  // namespace gantry
