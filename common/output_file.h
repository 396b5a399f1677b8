// A file written because the user named it as an output (gantry-coordinator --port-file
// F). The rule every program keeps: no file is ever renamed over, truncated or deleted
// unless the program created it or the user named it as this output, and then only when
// it is a regular file holding what this output holds (a previous run's), never one of
// the program's other files (its database, its token, its certificates, another output).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gantry {

struct OutputFileRules {
  std::string flag;  // "--port-file", for messages
  // The program's other files, each with the flag that names it ("--db /x/g.db"). The
  // output may be none of them, by path or as the same file under another name.
  std::vector<std::pair<std::string, std::string>> others;
  // Whether an existing file's contents are this output's (a previous run's) and so may
  // be replaced; anything else is the user's and stays.
  std::function<bool(absl::string_view contents)> is_previous_output;
};

// Whether `path` may be written as this output: true when a regular file is there that
// may be replaced, false when nothing is there (it will be created). FAILED_PRECONDITION
// naming the flag, the path and what it is otherwise: a folder, a device, a FIFO or
// socket, a symbolic link (writing would replace the link, not what it points to), one of
// `others`, or a file whose contents are not a previous output (the user's).
absl::StatusOr<bool> CheckOutputFile(const std::string& path, const OutputFileRules& rules);

// Checks (CheckOutputFile), then writes `contents` atomically: a new file is created
// without ever replacing one that appears meanwhile (which is then checked in turn).
absl::Status WriteOutputFile(const std::string& path, const std::string& contents, const OutputFileRules& rules);

// For OutputFileRules::is_previous_output of a file that holds one decimal number (a
// port) and perhaps a newline, or nothing.
bool HoldsOnlyANumber(absl::string_view contents);

}  // namespace gantry
