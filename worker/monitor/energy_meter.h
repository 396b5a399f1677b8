// The energy an epoch costs, from the first of these that works:
// - on a GPU run, the ranks' GPUs' NVML energy counters (nvml_energy.h), which the
//   trainer reads on every rank and sums on rank 0: the GPU boards only, not the CPUs;
// - the CPU packages' RAPL counters where the machine exposes them readable
//   (/sys/class/powercap/intel-rapl:N/energy_uj, Intel and recent AMD CPUs under Linux);
// - an estimate: the CPU seconds the ranks used times a per-core power
//   (--watts-per-core), labelled as an estimate.
//
// What RAPL measures: every package domain ("package-N", not "psys", which overlaps
// them) of rank 0's machine, i.e. cores, caches and uncore of all processes there —
// other ranks on that machine included, ranks on other machines not, DRAM not. The
// estimate counts every rank's process CPU time (user + system, its loader threads
// included).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/energy_source.h"

namespace gantry {

// The RAPL package zones of a powercap folder.
class RaplReader {
 public:
  // The readable package zones under `root` (top-level intel-rapl:N folders whose
  // "name" starts with "package"). NOT_FOUND when there is none; PERMISSION_DENIED
  // (naming the file and the fix) when there are zones but their counters cannot be read,
  // which is the default for non-root users since Linux 5.10.
  static absl::StatusOr<RaplReader> Open(const std::string& root = "/sys/class/powercap");

  // Each zone's counter now, in microjoules.
  absl::StatusOr<std::vector<uint64_t>> Read() const;

  // Joules between two readings of Read(): each zone's increase, counting a counter
  // that went down as one wrap-around at its max_energy_range_uj.
  double JoulesBetween(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) const;

  // "RAPL package-0+package-1".
  std::string Describe() const;

 private:
  struct Zone {
    std::string name;
    std::string energy_path;
    uint64_t max_range_uj = 0;
  };
  explicit RaplReader(std::vector<Zone> zones) : zones_(std::move(zones)) {}
  std::vector<Zone> zones_;
};

// User + system CPU seconds of this process so far (getrusage).
double ProcessCpuSeconds();

// One epoch's energy.
struct EpochEnergy {
  double joules = 0;
  EnergySource source = EnergySource::kEstimate;
  bool estimated() const { return source == EnergySource::kEstimate; }
};

// Rank 0's meter: Start() at an epoch's start, Stop() at its end.
class EnergyMeter {
 public:
  // `rapl`: the counters to read, or nullopt to estimate. `watts_per_core` > 0.
  EnergyMeter(std::optional<RaplReader> rapl, double watts_per_core);

  // The ranks' GPU counters give the epochs' energy from now on (Stop's `gpu_joules`);
  // `description` says whose ("NVML GPU 0000:3B:00.0 (rank 0) and the other ranks' GPUs").
  void CountGpus(std::string description) { gpu_description_ = std::move(description); }

  void Start();
  // The energy since Start(): `gpu_joules` (the ranks' GPUs' energy in the epoch) when
  // CountGpus was called and it is a number (NaN: some rank could not read its counter);
  // else RAPL's when both readings worked; else the estimate from `cpu_seconds` (all
  // ranks' CPU time in the epoch). Each fallback is logged with its reason.
  EpochEnergy Stop(double cpu_seconds, double gpu_joules = 0);

  // What Stop() reports from: "NVML GPU ... (GPU boards only); else ...", "RAPL
  // package-0 (rank 0's machine)" or "estimate: CPU seconds x 6 W per core".
  std::string Source() const;

 private:
  std::string CpuSource() const;

  std::optional<RaplReader> rapl_;
  double watts_per_core_;
  std::optional<std::vector<uint64_t>> start_;
  std::string gpu_description_;  // empty: GPUs not counted
};

}  // namespace gantry
