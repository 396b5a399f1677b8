#include "worker/monitor/rank_energy.h"

#include <cmath>
#include <string>

#include "spdlog/spdlog.h"
#include "worker/monitor/energy_meter.h"

namespace gantry {
namespace {

// The counter now, or nullopt (logged) when there is none or it cannot be read.
std::optional<uint64_t> ReadGpuCounter(const NvmlEnergyCounter* counter) {
  if (counter == nullptr) return std::nullopt;
  absl::StatusOr<uint64_t> mj = counter->ReadMillijoules();
  if (!mj.ok()) spdlog::warn("energy: {}", std::string(mj.status().message()));
  return mj.ok() ? std::optional<uint64_t>(*mj) : std::nullopt;
}

}  // namespace

RankEnergyProbe::RankEnergyProbe(const NvmlEnergyCounter* gpu)
    : gpu_(gpu), cpu_mark_(ProcessCpuSeconds()), gpu_mark_(ReadGpuCounter(gpu)) {}

double RankEnergyProbe::TakeCpuSeconds() {
  const double now = ProcessCpuSeconds();
  const double used = now - cpu_mark_;
  cpu_mark_ = now;
  return used;
}

double RankEnergyProbe::GpuJoulesSinceStart() const {
  if (gpu_ == nullptr || !gpu_mark_) return std::nan("");
  const std::optional<uint64_t> now = ReadGpuCounter(gpu_);
  if (!now) return std::nan("");
  const std::optional<double> joules = NvmlEnergyCounter::JoulesBetween(*gpu_mark_, *now);
  if (!joules) spdlog::warn("energy: {}'s counter went down (the driver was reloaded?)", gpu_->Describe());
  return joules.value_or(std::nan(""));
}

}  // namespace gantry
