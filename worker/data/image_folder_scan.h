// Walking a folder of images for make-dataset, deterministically: depth first, the
// entries of each folder in byte-wise order of their names (so the same tree is walked
// in the same order on every machine, whatever the locale), symbolic links followed to
// files and folders alike.
//
// Link loops are found, not followed: a folder whose (device, inode) is already on the
// path from the root (a link to an ancestor, or a bind mount of one) is reported as a
// loop, as is a link that the system cannot resolve for its own cycle (ELOOP). A folder
// reached twice by links that do not loop (two links to one folder) is walked twice, as
// a loop-free tree of links means.
//
// Memory: the names of the folders on the current path, not of the whole tree.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace gantry {

struct FolderEntry {
  enum class Kind {
    kFile,        // a regular file (perhaps through links)
    kLinkLoop,    // a folder that is its own ancestor, or a link cycle
    kUnreadable,  // cannot be examined or listed: permissions, a link to nothing, an I/O error
    kNotAFile,    // a FIFO, socket or device
  };
  Kind kind = Kind::kFile;
  std::string relative;  // below the root, '/'-separated, the names' bytes as they are
  std::string path;      // root + "/" + relative
  int depth = 1;         // 1 for an entry directly in the root
  std::string detail;    // for the problems: what was found
  int64_t size = 0;      // kFile: bytes
  int64_t mtime_ns = 0;  // kFile: last modification, nanoseconds since the epoch
  dev_t device = 0;      // kFile: of the file itself (after following links)
  ino_t inode = 0;
};

// Calls `visit` for every file and every problem under `root`, in the order above;
// folders themselves are not visited (an unreadable or looping one is, as a problem).
// Stops at, and returns, the first error `visit` returns. INVALID_ARGUMENT naming `root`
// when it is not a folder (NOT_FOUND when it does not exist).
absl::Status ScanImageFolder(const std::string& root, const std::function<absl::Status(const FolderEntry&)>& visit);

}  // namespace gantry
