// EpochRow <-> gantry.v1.EpochMetrics, column by column (EpochColumns(): each column's
// field has its name), so the coordinator stores exactly what the run folder holds and
// `gantry report --csv` prints the bytes of epochs.csv (doubles travel unrounded). A
// column whose field is a google.protobuf.DoubleValue (quality_kid) travels only when
// measured: NaN, "not measured", leaves it unset (the coordinator refuses non-finite
// numbers), and an unset field, also from a worker that predates it, reads as NaN.
#pragma once

#include "gantry/v1/metrics.pb.h"
#include "report/epoch_metrics.h"

namespace gantry {

v1::EpochMetrics ToEpochMetrics(const EpochRow& row);
EpochRow FromEpochMetrics(const v1::EpochMetrics& metrics);

}  // namespace gantry
