// The folders a job's data may come from (--data-root), and the check that confines a
// dataset path to them.
//
// Both sides are compared after realpath(3): `..` components and symbolic links are
// resolved first, so neither /data/../etc nor a link inside a root pointing outside it
// gets through. A path is inside a root when it is the root or continues it with '/'
// (so /data2 is not inside /data).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

class DataRoots {
 public:
  // Resolves every folder. INVALID_ARGUMENT naming the folder when it is missing, not a
  // directory, or when no folder is given.
  static absl::StatusOr<DataRoots> Create(const std::vector<std::string>& folders);

  // The resolved path of `path`, which must be absolute, exist, and lie inside a root.
  // Otherwise INVALID_ARGUMENT naming `field` and saying what to change.
  absl::StatusOr<std::string> Confine(const std::string& field, const std::string& path) const;

  const std::vector<std::string>& roots() const { return roots_; }

 private:
  explicit DataRoots(std::vector<std::string> roots) : roots_(std::move(roots)) {}
  std::vector<std::string> roots_;  // resolved, without trailing '/' (except "/")
};

}  // namespace gantry
