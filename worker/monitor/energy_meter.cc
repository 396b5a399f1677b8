#include "worker/monitor/energy_meter.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

// The first line of a small sysfs file, or nullopt when it cannot be read.
std::optional<std::string> ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(line));
}

std::optional<uint64_t> ReadCounter(const std::string& path) {
  const std::optional<std::string> line = ReadLine(path);
  uint64_t v = 0;
  if (!line || !absl::SimpleAtoi(*line, &v)) return std::nullopt;
  return v;
}

// A top-level zone folder: "intel-rapl:N" (sub-zones are "intel-rapl:N:M").
bool IsTopLevelZone(const std::string& folder) {
  constexpr absl::string_view kPrefix = "intel-rapl:";
  if (!absl::StartsWith(folder, kPrefix)) return false;
  const absl::string_view index = absl::string_view(folder).substr(kPrefix.size());
  return !index.empty() && std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

absl::StatusOr<RaplReader> RaplReader::Open(const std::string& root) {
  std::error_code ec;
  std::vector<std::string> folders;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (IsTopLevelZone(name)) folders.push_back(name);
  }
  if (ec) return absl::NotFoundError(absl::StrCat(root, ": no powercap folder (", ec.message(), ")"));
  std::sort(folders.begin(), folders.end());
  std::vector<Zone> zones;
  std::string unreadable;
  for (const std::string& folder : folders) {
    const std::string dir = absl::StrCat(root, "/", folder);
    const std::optional<std::string> name = ReadLine(dir + "/name");
    if (!name || !absl::StartsWith(*name, "package")) continue;  // psys overlaps the packages
    Zone zone{*name, dir + "/energy_uj", 0};
    const std::optional<uint64_t> max_range = ReadCounter(dir + "/max_energy_range_uj");
    if (!ReadCounter(zone.energy_path) || !max_range || *max_range == 0) {
      unreadable = zone.energy_path;
      continue;
    }
    zone.max_range_uj = *max_range;
    zones.push_back(std::move(zone));
  }
  if (zones.empty() && !unreadable.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        unreadable, " is not readable (root only since Linux 5.10); energy is estimated from CPU time instead. "
                    "To measure it: run as root, or make the counters readable (chmod a+r, a udev rule)"));
  }
  if (zones.empty()) return absl::NotFoundError(absl::StrCat(root, ": no RAPL package zone"));
  return RaplReader(std::move(zones));
}

absl::StatusOr<std::vector<uint64_t>> RaplReader::Read() const {
  std::vector<uint64_t> values;
  for (const Zone& zone : zones_) {
    const std::optional<uint64_t> v = ReadCounter(zone.energy_path);
    if (!v) return absl::UnavailableError(absl::StrCat(zone.energy_path, ": cannot read the energy counter"));
    values.push_back(*v);
  }
  return values;
}

double RaplReader::JoulesBetween(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) const {
  double uj = 0;
  for (size_t i = 0; i < zones_.size() && i < before.size() && i < after.size(); ++i) {
    // The counter runs from 0 to max_energy_range_uj and starts again at 0; an epoch
    // shorter than a wrap period (hours at full load) wraps at most once.
    uj += after[i] >= before[i] ? static_cast<double>(after[i] - before[i])
                                : static_cast<double>(zones_[i].max_range_uj - before[i] + after[i]);
  }
  return uj * 1e-6;
}

std::string RaplReader::Describe() const {
  std::vector<std::string> names;
  for (const Zone& z : zones_) names.push_back(z.name);
  return absl::StrCat("RAPL ", absl::StrJoin(names, "+"));
}

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

EnergyMeter::EnergyMeter(std::optional<RaplReader> rapl, double watts_per_core)
    : rapl_(std::move(rapl)), watts_per_core_(watts_per_core) {}

void EnergyMeter::Start() {
  start_.reset();
  if (!rapl_) return;
  absl::StatusOr<std::vector<uint64_t>> now = rapl_->Read();
  if (now.ok()) {
    start_ = std::move(*now);
  } else {
    spdlog::warn("{}; this epoch's energy is estimated", std::string(now.status().message()));
  }
}

EpochEnergy EnergyMeter::Stop(double cpu_seconds, double gpu_joules) {
  if (!gpu_description_.empty()) {
    if (std::isfinite(gpu_joules)) return {gpu_joules, EnergySource::kNvml};
    spdlog::warn("energy: a rank could not read its GPU's NVML energy counter this epoch (its log says why); this "
                 "epoch's energy is from {}", CpuSource());
  }
  if (rapl_ && start_) {
    absl::StatusOr<std::vector<uint64_t>> now = rapl_->Read();
    if (now.ok()) return {rapl_->JoulesBetween(*start_, *now), EnergySource::kRapl};
    spdlog::warn("{}; this epoch's energy is estimated", std::string(now.status().message()));
  }
  return {cpu_seconds * watts_per_core_, EnergySource::kEstimate};
}

std::string EnergyMeter::Source() const {
  if (gpu_description_.empty()) return CpuSource();
  return absl::StrCat(gpu_description_, " (GPU boards only, not the CPUs); where a counter fails, ", CpuSource());
}

std::string EnergyMeter::CpuSource() const {
  if (rapl_) return absl::StrCat(rapl_->Describe(), " (rank 0's machine, CPU packages)");
  return absl::StrFormat("estimate: CPU seconds x %g W per core (--watts-per-core)", watts_per_core_);
}

}  // namespace gantry
