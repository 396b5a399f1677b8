// The epoch rows as a fixed-width table for the terminal (one line per epoch): what
// `gantry-worker train` prints at the end and `gantry watch` prints as rows arrive.
#pragma once

#include <string>
#include <vector>

#include "report/epoch_metrics.h"

namespace gantry {

std::string FormatEpochTable(const std::vector<EpochRow>& rows);

}  // namespace gantry
