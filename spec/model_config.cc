#include "spec/model_config.h"

namespace gantry {

const std::vector<std::string>& ModelNames() {
  static const auto* names = new std::vector<std::string>{"dcgan"};
  return *names;
}

}  // namespace gantry
