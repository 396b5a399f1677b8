// This machine's name, for run manifests, pool registration and telling GPUs apart.
#pragma once

#include <string>

namespace gantry {

// gethostname(), or "unknown" when it fails.
std::string ThisHostName();

}  // namespace gantry
