// The bound on how many samples one generate writes (one PNG file each): the coordinator
// refuses a submission above it (runspec/generate_spec_check.h) and `gantry-worker
// generate` refuses a --count or walk above it (worker/generate/generate_job.h), so both
// name the same figure. No proto, no engine: both sides include it.
#pragma once

#include <cstdint>

namespace gantry {

inline constexpr int64_t kMaxGenerateSamples = 100'000;

}  // namespace gantry
