#include "common/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"

namespace gantry {
namespace {

// More than any output this rule protects: a larger file is the user's, unread.
constexpr size_t kMaxPreviousOutputBytes = 4096;

absl::Status Refused(const OutputFileRules& rules, const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat(rules.flag, " ", path, ": ", why, "; nothing was written"));
}

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

bool SameFile(const struct stat& a, const std::string& other) {
  struct stat b {};
  return stat(other.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The other files are compared by name too, for one that does not exist yet.
absl::Status CheckNotAnother(const std::string& path, const struct stat* st, const OutputFileRules& rules) {
  for (const auto& [flag, other] : rules.others) {
    if (other.empty()) continue;
    if (other == path || (st != nullptr && SameFile(*st, other))) {
      return Refused(rules, path, absl::StrCat("is the file of ", flag, " ", other, "; give ", rules.flag,
                                               " a path of its own"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool HoldsOnlyANumber(absl::string_view contents) {
  contents = absl::StripTrailingAsciiWhitespace(contents);
  if (contents.size() > 20) return false;
  for (char c : contents) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::StatusOr<bool> CheckOutputFile(const std::string& path, const OutputFileRules& rules) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Refused(rules, path, absl::StrCat("cannot be examined (", std::strerror(errno), ")"));
    if (absl::Status s = CheckNotAnother(path, nullptr, rules); !s.ok()) return s;
    return false;
  }
  if (S_ISLNK(st.st_mode)) {
    return Refused(rules, path, "is a symbolic link (writing would replace the link); give the path of a regular file");
  }
  if (!S_ISREG(st.st_mode)) return Refused(rules, path, KindOf(st.st_mode));
  if (absl::Status s = CheckNotAnother(path, &st, rules); !s.ok()) return s;
  absl::StatusOr<std::vector<uint8_t>> bytes = absl::FailedPreconditionError("larger than any previous output");
  if (static_cast<size_t>(st.st_size) <= kMaxPreviousOutputBytes) bytes = ReadFileBytes(path, kMaxPreviousOutputBytes);
  if (!bytes.ok() || !rules.is_previous_output(absl::string_view(reinterpret_cast<const char*>(bytes->data()),
                                                                 bytes->size()))) {
    return Refused(rules, path, absl::StrCat("exists and does not hold what ", rules.flag,
                                             " writes, so it is not a previous run's; remove it or give another path"));
  }
  return true;
}

absl::Status WriteOutputFile(const std::string& path, const std::string& contents, const OutputFileRules& rules) {
  absl::StatusOr<bool> replace = CheckOutputFile(path, rules);
  if (!replace.ok()) return replace.status();
  if (!*replace) {
    const absl::Status created = CreateFileAtomically(path, contents);
    if (!absl::IsAlreadyExists(created)) return created;
    replace = CheckOutputFile(path, rules);  // it appeared meanwhile
    if (!replace.ok()) return replace.status();
  }
  return WriteFileAtomically(path, contents);
}

}  // namespace gantry
