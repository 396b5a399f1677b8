// The ops of the Backend interface as declared in worker/tensor/backend.h, read from the
// header itself, so the op suite can prove it has a row for each one.
#pragma once

#include <set>
#include <string>

namespace gantry::testing {

// The names of the virtual functions declared in the header at `path` that are ops: all
// but the destructor and the backend's description (name, device, Synchronize,
// ProductPath). Empty when the file cannot be read.
std::set<std::string> DeclaredBackendOps(const std::string& path);

}  // namespace gantry::testing
