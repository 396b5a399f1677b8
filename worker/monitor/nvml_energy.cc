#include "worker/monitor/nvml_energy.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {

// NVML's C interface, declared here rather than taken from nvml.h (which comes with the
// CUDA toolkit, not with every build machine): nvmlReturn_t is a C enum (an int, 0 for
// NVML_SUCCESS) and nvmlDevice_t an opaque pointer.
namespace {

using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using HandleByPciBusIdFn = NvmlReturn (*)(const char*, NvmlDevice*);
using TotalEnergyFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);

}  // namespace

struct NvmlEnergyCounter::Library {
  void* handle = nullptr;
  ShutdownFn shutdown = nullptr;  // set once nvmlInit_v2 succeeded
  ErrorStringFn error_string = nullptr;
  TotalEnergyFn total_energy = nullptr;

  ~Library() {
    if (shutdown != nullptr) shutdown();
    if (handle != nullptr) dlclose(handle);
  }

  // "nvmlX: NVML's words (code N)".
  std::string Describe(const char* call, NvmlReturn code) const {
    const char* words = error_string != nullptr ? error_string(code) : nullptr;
    return absl::StrCat(call, ": ", words != nullptr ? words : "unknown error", " (NVML error ", code, ")");
  }
};

namespace {

template <typename Fn>
absl::StatusOr<Fn> Symbol(void* handle, const std::string& library, const char* name) {
  dlerror();  // clears an earlier error, so the one below is this lookup's
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(library, " has no ", name, " (",
                                                      why != nullptr ? why : "null symbol",
                                                      "); a driver older than NVML's energy counter?"));
  }
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace

std::string NvmlLibraryPath() {
  const char* path = std::getenv("GANTRY_NVML_LIBRARY");
  return path != nullptr && *path != '\0' ? std::string(path) : std::string("libnvidia-ml.so.1");
}

absl::StatusOr<NvmlEnergyCounter> NvmlEnergyCounter::Open(const std::string& pci_bus_id, const std::string& library) {
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat("cannot load ", library, " (", why != nullptr ? why : "dlopen",
                                                      "): no NVIDIA driver here, or set GANTRY_NVML_LIBRARY to its "
                                                      "libnvidia-ml.so.1"));
  }
  ASSIGN_OR_RETURN(const InitFn init, Symbol<InitFn>(lib->handle, library, "nvmlInit_v2"));
  ASSIGN_OR_RETURN(const ShutdownFn shutdown, Symbol<ShutdownFn>(lib->handle, library, "nvmlShutdown"));
  ASSIGN_OR_RETURN(lib->error_string, Symbol<ErrorStringFn>(lib->handle, library, "nvmlErrorString"));
  ASSIGN_OR_RETURN(const HandleByPciBusIdFn by_bus_id,
                   Symbol<HandleByPciBusIdFn>(lib->handle, library, "nvmlDeviceGetHandleByPciBusId_v2"));
  ASSIGN_OR_RETURN(lib->total_energy,
                   Symbol<TotalEnergyFn>(lib->handle, library, "nvmlDeviceGetTotalEnergyConsumption"));
  if (const NvmlReturn r = init(); r != kNvmlSuccess) {
    return absl::FailedPreconditionError(lib->Describe("nvmlInit_v2", r));
  }
  lib->shutdown = shutdown;
  NvmlDevice device = nullptr;
  if (const NvmlReturn r = by_bus_id(pci_bus_id.c_str(), &device); r != kNvmlSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat(lib->Describe("nvmlDeviceGetHandleByPciBusId_v2", r), " for the GPU at ", pci_bus_id));
  }
  NvmlEnergyCounter counter(std::move(lib), device, pci_bus_id);
  // NOT_SUPPORTED here on GPUs older than Volta: better said now than every epoch.
  if (absl::StatusOr<uint64_t> first = counter.ReadMillijoules(); !first.ok()) {
    return absl::FailedPreconditionError(first.status().message());
  }
  return counter;
}

NvmlEnergyCounter::NvmlEnergyCounter(std::unique_ptr<Library> library, void* device, std::string pci_bus_id)
    : library_(std::move(library)), device_(device), pci_bus_id_(std::move(pci_bus_id)) {}

NvmlEnergyCounter::NvmlEnergyCounter(NvmlEnergyCounter&&) noexcept = default;
NvmlEnergyCounter& NvmlEnergyCounter::operator=(NvmlEnergyCounter&&) noexcept = default;
NvmlEnergyCounter::~NvmlEnergyCounter() = default;

absl::StatusOr<uint64_t> NvmlEnergyCounter::ReadMillijoules() const {
  unsigned long long mj = 0;
  if (const NvmlReturn r = library_->total_energy(device_, &mj); r != kNvmlSuccess) {
    return absl::UnavailableError(
        absl::StrCat(library_->Describe("nvmlDeviceGetTotalEnergyConsumption", r), " for the GPU at ", pci_bus_id_));
  }
  return static_cast<uint64_t>(mj);
}

std::optional<double> NvmlEnergyCounter::JoulesBetween(uint64_t before_mj, uint64_t after_mj) {
  if (after_mj < before_mj) return std::nullopt;
  return static_cast<double>(after_mj - before_mj) * 1e-3;
}

std::string NvmlEnergyCounter::Describe() const { return absl::StrCat("NVML GPU ", pci_bus_id_); }

}  // namespace gantry
