// A GPU's energy counter, read through NVML (the NVIDIA driver's management library):
// nvmlDeviceGetTotalEnergyConsumption, the millijoules the board used since the driver
// loaded (Volta and newer GPUs). With --device cuda every rank reads its own GPU's
// counter at an epoch's start and end (trainer.cc), and rank 0 sums the ranks' joules.
//
// The library is loaded at run time (dlopen of libnvidia-ml.so.1, or the file named by
// GANTRY_NVML_LIBRARY), so gantry-worker has no link-time dependency on the driver and
// runs where it is absent; any failure (no library, a missing symbol, an NVML error such
// as NOT_SUPPORTED on an older GPU) is a Status naming it, and the caller falls back to
// RAPL or the estimate (energy_meter.h).
//
// Tested here against a fake libnvidia-ml (tests/train/fake_nvml); the real library has
// not run on a GPU in this project's checks yet.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

// The library NVML is loaded from: $GANTRY_NVML_LIBRARY when set and not empty, else
// "libnvidia-ml.so.1" (the driver's soname, found on the loader's usual path).
std::string NvmlLibraryPath();

class NvmlEnergyCounter {
 public:
  // Loads `library`, initialises NVML and finds the GPU at `pci_bus_id` (as CUDA gives
  // it, "0000:3B:00.0"; NVML numbers GPUs without regard to CUDA_VISIBLE_DEVICES, the
  // bus id names the same board in both), then reads its counter once to check that it
  // works. Errors (FAILED_PRECONDITION) name the library or the NVML call and NVML's own
  // words for what went wrong.
  static absl::StatusOr<NvmlEnergyCounter> Open(const std::string& pci_bus_id,
                                                const std::string& library = NvmlLibraryPath());

  NvmlEnergyCounter(NvmlEnergyCounter&&) noexcept;
  NvmlEnergyCounter& operator=(NvmlEnergyCounter&&) noexcept;
  ~NvmlEnergyCounter();  // shuts NVML down and unloads the library

  // The board's energy counter now, in millijoules. UNAVAILABLE with NVML's words when
  // the call fails.
  absl::StatusOr<uint64_t> ReadMillijoules() const;

  // Joules between two readings; nullopt when the counter went down (it only grows
  // while the driver stays loaded, so the driver was reloaded in between).
  static std::optional<double> JoulesBetween(uint64_t before_mj, uint64_t after_mj);

  // "NVML GPU 0000:3B:00.0".
  std::string Describe() const;

 private:
  struct Library;  // the dlopen handle and the resolved functions
  NvmlEnergyCounter(std::unique_ptr<Library> library, void* device, std::string pci_bus_id);

  std::unique_ptr<Library> library_;
  void* device_ = nullptr;  // nvmlDevice_t
  std::string pci_bus_id_;
};

}  // namespace gantry
