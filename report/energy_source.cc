#include "report/energy_source.h"

namespace gantry {

std::string EnergySourceName(int code) {
  switch (static_cast<EnergySource>(code)) {
    case EnergySource::kNone: return "none";
    case EnergySource::kEstimate: return "estimate";
    case EnergySource::kRapl: return "rapl";
    case EnergySource::kNvml: return "nvml";
  }
  return "unknown";
}

EnergySource EnergySourceOf(int energy_source, int energy_estimated) {
  if (energy_source != static_cast<int>(EnergySource::kNone)) return static_cast<EnergySource>(energy_source);
  return energy_estimated != 0 ? EnergySource::kEstimate : EnergySource::kRapl;
}

}  // namespace gantry
