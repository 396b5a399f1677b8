#include "common/output_folder.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

// The folder's first entry, for the message; empty when there is none (or it cannot be read).
std::string FirstEntry(const std::string& path) {
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  if (ec || it == fs::directory_iterator()) return "";
  return it->path().filename().string();
}

}  // namespace

absl::Status CheckNewOutputFolder(const std::string& flag, const std::string& path, const std::string& program) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": give the folder to write to"));
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", EscapeForTerminal(path), ": cannot look at it: ",
                                                   ec.message(), "; give a new folder"));
  }
  if (!fs::exists(st)) return absl::OkStatus();
  std::string what;
  if (fs::is_symlink(st)) {
    what = "is a symbolic link";
  } else if (!fs::is_directory(st)) {
    what = "is a file, not a folder";
  } else if (const std::string entry = FirstEntry(path); !entry.empty()) {
    what = absl::StrCat("is not an empty folder (it holds ", EscapeForTerminal(entry), ")");
  } else {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(flag, " ", EscapeForTerminal(path), " exists and ", what, "; ",
                                                 program, " never writes over files: give a new folder, or move the "
                                                 "old one away"));
}

absl::Status CreateOutputFolder(const std::string& flag, const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", EscapeForTerminal(path), ": cannot create the folder: ",
                                                   ec.message(), "; give a folder in a writable place"));
  }
  return absl::OkStatus();
}

}  // namespace gantry
