#include "worker/data/image_folder_scan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

using Visitor = std::function<absl::Status(const FolderEntry&)>;
using FolderId = std::pair<dev_t, ino_t>;

struct Walk {
  const Visitor& visit;
  std::vector<FolderId> path_ids;  // the folders from the root to the current one
};

// The names in `folder` (without . and ..), sorted byte-wise; an errno on failure.
int ListFolder(const std::string& folder, std::vector<std::string>* names) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return errno;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) names->push_back(entry->d_name);
    errno = 0;
  }
  const int error = errno;
  ::closedir(dir);
  // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp).
  std::sort(names->begin(), names->end());
  return error;
}

absl::Status Problem(const Walk& walk, FolderEntry entry, FolderEntry::Kind kind, std::string detail) {
  entry.kind = kind;
  entry.detail = std::move(detail);
  return walk.visit(entry);
}

absl::Status WalkFolder(Walk& walk, const std::string& folder, const std::string& relative, int depth) {
  std::vector<std::string> names;
  if (const int error = ListFolder(folder, &names); error != 0) {
    if (relative.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(folder, ": cannot list this folder: ", std::strerror(error)));
    }
    FolderEntry entry;
    entry.relative = relative;
    entry.path = folder;
    entry.depth = depth - 1;
    return Problem(walk, entry, FolderEntry::Kind::kUnreadable,
                   absl::StrCat("cannot list this folder: ", std::strerror(error)));
  }
  for (const std::string& name : names) {
    FolderEntry entry;
    entry.relative = relative.empty() ? name : absl::StrCat(relative, "/", name);
    entry.path = absl::StrCat(folder, "/", name);
    entry.depth = depth;
    struct stat st {};
    if (::stat(entry.path.c_str(), &st) != 0) {  // follows links
      const int error = errno;
      if (error == ELOOP) {
        RETURN_IF_ERROR(Problem(walk, entry, FolderEntry::Kind::kLinkLoop, "a cycle of symbolic links"));
      } else {
        struct stat link {};
        const bool dangling = error == ENOENT && ::lstat(entry.path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
        RETURN_IF_ERROR(Problem(walk, entry, FolderEntry::Kind::kUnreadable,
                                dangling ? "a symbolic link to nothing" : std::strerror(error)));
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      const FolderId id{st.st_dev, st.st_ino};
      if (std::find(walk.path_ids.begin(), walk.path_ids.end(), id) != walk.path_ids.end()) {
        RETURN_IF_ERROR(Problem(walk, entry, FolderEntry::Kind::kLinkLoop,
                                "a folder that contains itself (a link to one of its parents)"));
        continue;
      }
      walk.path_ids.push_back(id);
      absl::Status inside = WalkFolder(walk, entry.path, entry.relative, depth + 1);
      walk.path_ids.pop_back();
      RETURN_IF_ERROR(inside);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      const char* what = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
      RETURN_IF_ERROR(Problem(walk, entry, FolderEntry::Kind::kNotAFile, what));
      continue;
    }
    entry.size = st.st_size;
    entry.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    entry.device = st.st_dev;
    entry.inode = st.st_ino;
    RETURN_IF_ERROR(walk.visit(entry));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ScanImageFolder(const std::string& root, const Visitor& visit) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    const int error = errno;
    const std::string what = absl::StrCat(root, ": ", std::strerror(error), "; give the folder of images to pack");
    return error == ENOENT ? absl::NotFoundError(what) : absl::InvalidArgumentError(what);
  }
  if (!S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(root,
                                                   ": not a folder; give the folder of "
                                                   "images to pack"));
  Walk walk{visit, {{st.st_dev, st.st_ino}}};
  // A root given as "dir/" is walked as "dir": paths join with one slash.
  std::string folder = root;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return WalkFolder(walk, folder, "", 1);
}

}  // namespace gantry
