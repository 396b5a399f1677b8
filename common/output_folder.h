// A folder a program fills with new files because the user named it as an output
// (make-flow --out, rollout --out, generate --out): the rule of output_file.h for
// folders. It may be new (it is created) or an empty folder; anything else there (files,
// a previous result, a symbolic link, a file under the folder's name) is the user's and
// is refused by name before any work starts, so everything the program then writes there
// is its own.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gantry {

// OK when nothing is at `path` or it is an empty folder (not a link to one). Else
// INVALID_ARGUMENT "FLAG PATH exists and is not an empty folder (it holds NAME, ...);
// PROGRAM never writes over files: give a new folder, or move the old one away".
absl::Status CheckNewOutputFolder(const std::string& flag, const std::string& path, const std::string& program);

// Creates `path` and its parents (an empty folder already there is fine). The error names
// the flag and the path.
absl::Status CreateOutputFolder(const std::string& flag, const std::string& path);

}  // namespace gantry
