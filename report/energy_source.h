// Where an epoch's energy figure comes from: epochs.csv's energy_source column (a code,
// as every column is a number) and its name in timing.md, the log and the dashboard.
#pragma once

#include <string>

namespace gantry {

enum class EnergySource : int {
  kNone = 0,      // not measured (rows written before the column existed)
  kEstimate = 1,  // CPU seconds x --watts-per-core
  kRapl = 2,      // the CPU packages' RAPL counters of rank 0's machine
  kNvml = 3,      // the NVML energy counters of the ranks' GPUs
};

// "none", "estimate", "rapl", "nvml"; "unknown" for a code this build does not know.
std::string EnergySourceName(int code);

// The source of a row's energy from its energy_source and energy_estimated columns:
// rows from before the energy_source column (0) were RAPL's unless estimated.
EnergySource EnergySourceOf(int energy_source, int energy_estimated);

}  // namespace gantry
