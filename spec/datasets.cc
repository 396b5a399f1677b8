#include "spec/datasets.h"

namespace gantry {

const std::vector<std::string>& DatasetNames() {
  static const auto* names = new std::vector<std::string>{"mnist", "fashion-mnist"};
  return *names;
}

std::string DefaultDataDir(const std::string& dataset) {
  if (dataset == "fashion-mnist") return "/usr/share/datasets/fashion-mnist";
  return "";
}

}  // namespace gantry
