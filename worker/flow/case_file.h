// `make-flow --cases FILE`: a YAML (or JSON) list of cases, each a mapping of overrides
// of the command's own settings, e.g.
//   - {re: 80, seed: 1}
//   - {re: 120, obstacle: square, seed: 2}
// Keys: re, obstacle, obstacle_x, obstacle_y, seed, diameter, u_lattice, nx, ny, frames, every,
// warmup_periods
// (snake_case or kebab-case).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/flow/flow_params.h"

namespace gantry::flow {

inline constexpr size_t kMaxCaseFileBytes = 1 << 20;
inline constexpr size_t kMaxCases = 10000;

// The cases of `text` (`name` labels the messages), each `base` with its overrides.
// INVALID_ARGUMENT naming the file, the entry (1-based) and the fix for: not YAML/JSON,
// not a non-empty list, an entry that is not a mapping, an unknown key, a key given
// twice, a value that is not a number (or not a whole number where one is needed).
absl::StatusOr<std::vector<FlowRequest>> ParseCases(const std::string& text, const std::string& name,
                                                    const FlowRequest& base);

// The same for the file at `path` (at most kMaxCaseFileBytes).
absl::StatusOr<std::vector<FlowRequest>> ReadCases(const std::string& path, const FlowRequest& base);

}  // namespace gantry::flow
