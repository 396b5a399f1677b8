#include "runspec/engine_names.h"

namespace gantry {

const std::vector<std::string>& KernelNames() {
  static const auto* names = new std::vector<std::string>{"onednn", "eigen"};
  return *names;
}

const std::vector<std::string>& DeviceNames() {
  static const auto* names = new std::vector<std::string>{"cpu", "cuda"};
  return *names;
}

}  // namespace gantry
