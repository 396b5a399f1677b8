#include "tests/testing/backend_ops/backend_interface.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace gantry::testing {

std::set<std::string> DeclaredBackendOps(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  // "virtual <return type> <Name>(" across line breaks; the destructor has no return type.
  static const std::regex kVirtual(R"(\bvirtual\s+[\w:<>,\s\*&]*?\b([A-Za-z_]\w*)\s*\()");
  const std::set<std::string> not_ops = {"name", "device", "Synchronize", "ProductPath"};
  std::set<std::string> ops;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), kVirtual); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (!not_ops.contains(name)) ops.insert(name);
  }
  return ops;
}

}  // namespace gantry::testing
