// A stand-in for libnvidia-ml.so.1 with the few functions gantry calls
// (worker/monitor/nvml_energy.cc), scripted through the environment, so the NVML energy
// path runs in tests on machines without an NVIDIA GPU or driver:
//   FAKE_NVML_INIT_ERROR      set: nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
//   FAKE_NVML_BUS_ID          the one GPU's PCI bus id (default 0000:3B:00.0); any other
//                             id is NVML_ERROR_NOT_FOUND
//   FAKE_NVML_ENERGY          "BASE:STEP": the n-th counter read since nvmlInit_v2
//                             (n = 0, 1, ...) returns BASE + n x STEP millijoules
//                             (default 1000:250)
//   FAKE_NVML_ENERGY_FAILS_AT read n and later fail with NVML_ERROR_NOT_SUPPORTED (0: all)
// Plain C functions with NVML's names and ABI (nvmlReturn_t is an int, nvmlDevice_t a
// pointer).
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;
constexpr int kDriverNotLoaded = 9;

int device_token = 0;      // the one device's handle points here
long long energy_reads = 0;  // counter reads since the last nvmlInit_v2

long long EnvNumber(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : fallback;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (std::getenv("FAKE_NVML_INIT_ERROR") != nullptr) return kDriverNotLoaded;
  energy_reads = 0;
  return kSuccess;
}

int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int result) {
  switch (result) {
    case kSuccess: return "Success";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    case kDriverNotLoaded: return "Driver Not Loaded";
  }
  return "Unknown Error";
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  const char* ours = std::getenv("FAKE_NVML_BUS_ID");
  if (std::strcmp(bus_id, ours != nullptr ? ours : "0000:3B:00.0") != 0) return kNotFound;
  *device = &device_token;
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  if (device != &device_token) return kNotFound;
  const long long read = energy_reads++;
  const long long fails_at = EnvNumber("FAKE_NVML_ENERGY_FAILS_AT", -1);
  if (fails_at >= 0 && read >= fails_at) return kNotSupported;
  const char* script = std::getenv("FAKE_NVML_ENERGY");
  const std::string s = script != nullptr ? script : "1000:250";
  const size_t colon = s.find(':');
  const long long base = std::atoll(s.substr(0, colon).c_str());
  const long long step = colon == std::string::npos ? 0 : std::atoll(s.substr(colon + 1).c_str());
  *millijoules = static_cast<unsigned long long>(base + read * step);
  return kSuccess;
}

}  // extern "C"
