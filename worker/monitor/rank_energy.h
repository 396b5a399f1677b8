// What one rank measures of its own energy during an epoch, for rank 0's per-epoch
// total (energy_meter.h): the CPU time its process used, and on a GPU run its GPU's
// joules (nvml_energy.h). Ranks that are threads of one process share that process's
// CPU-time count and its GPU, so there rank 0's numbers alone are the total.
#pragma once

#include <cstdint>
#include <optional>

#include "worker/monitor/nvml_energy.h"

namespace gantry {

class RankEnergyProbe {
 public:
  // Marks the CPU time and the GPU counter now. `gpu` is this rank's GPU counter (not
  // owned; null: none); a counter that cannot be read is logged and then not counted.
  explicit RankEnergyProbe(const NvmlEnergyCounter* gpu);

  // CPU seconds of this process since the previous call (or the construction).
  double TakeCpuSeconds();

  // Joules of this rank's GPU since the construction; NaN when there is no counter,
  // it cannot be read, or it went down (the driver was reloaded).
  double GpuJoulesSinceStart() const;

 private:
  const NvmlEnergyCounter* gpu_;
  double cpu_mark_;
  std::optional<uint64_t> gpu_mark_;
};

}  // namespace gantry
