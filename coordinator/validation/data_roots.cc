#include "coordinator/validation/data_roots.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {
namespace {

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return absl::NotFoundError(std::strerror(errno));
  return std::string(resolved);
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Within(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (absl::StartsWith(path, root) && path[root.size()] == '/');
}

}  // namespace

absl::StatusOr<DataRoots> DataRoots::Create(const std::vector<std::string>& folders) {
  if (folders.empty()) {
    return absl::InvalidArgumentError("--data-root: give at least one folder that job data may come from");
  }
  std::vector<std::string> roots;
  for (const std::string& folder : folders) {
    absl::StatusOr<std::string> resolved = RealPath(folder);
    if (!resolved.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--data-root ", folder, ": ", resolved.status().message(), " (create it or fix the path)"));
    }
    if (!IsDirectory(*resolved)) {
      return absl::InvalidArgumentError(absl::StrCat("--data-root ", folder, ": not a directory"));
    }
    roots.push_back(*resolved);
  }
  return DataRoots(std::move(roots));
}

absl::StatusOr<std::string> DataRoots::Confine(const std::string& field, const std::string& path) const {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' must be an absolute path"));
  }
  absl::StatusOr<std::string> resolved = RealPath(path);
  if (!resolved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path, "' does not resolve on the coordinator (", resolved.status().message(), ")"));
  }
  for (const std::string& root : roots_) {
    if (Within(*resolved, root)) return *resolved;
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' (resolved to ", *resolved,
                                                 ") is outside the data roots ", absl::StrJoin(roots_, ", "),
                                                 "; put the data under one of them"));
}

}  // namespace gantry
