// Run files: a YAML (or JSON) mapping of "setting: value" pairs, the same names as the
// flags of `gantry-worker train` (gantry-worker --config, gantry submit RUN_FILE).
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "runspec/train_config.h"

namespace gantry {

// A run file holds a few dozen settings; anything far larger is a mistake (the wrong
// file), refused before it is parsed.
inline constexpr size_t kMaxRunFileBytes = 1 << 20;

// Reads the run file at `path`. Lists (batch-size) may be YAML sequences or
// comma-separated strings; snake_case keys (data_dir) are the same as kebab-case ones.
// Refused with INVALID_ARGUMENT (NOT_FOUND when missing), the message naming the file
// and the fix: not a regular file (a folder, a FIFO), larger than kMaxRunFileBytes, not
// YAML/JSON, nested too deeply for the YAML parser, not a mapping, an unknown
// key, a key given twice, a value that is empty, nested, or not a scalar or a list of
// scalars. Values are not checked here
// (ResolveTrainConfig does that).
absl::StatusOr<RawSettings> ReadRunFile(const std::string& path);

// The same for text already read (`name` labels the messages).
absl::StatusOr<RawSettings> ParseRunFile(const std::string& text, const std::string& name);

}  // namespace gantry
