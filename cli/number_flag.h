// Whole-number and seed flags of `gantry`, checked when the command line is parsed with
// common/bounded_number.h's words: "--count: bad value '1e30' (an integer in [1, 100000])"
// and exit code 2, quoting the value as typed. CLI11 reading straight into an int64 or a
// uint64 would clamp 1e30 to 9223372036854775807, wrap -1 to 2^64-1 and take 1e23 for
// a seed; these validators see the text first, so nothing is clamped, wrapped or rounded.
#pragma once

#include "CLI/CLI.hpp"
#include "common/bounded_number.h"

namespace gantry::cli {

// Accepts a decimal integer in `range`.
CLI::Validator IntegerIn(const IntRange& range);
// Accepts a seed: decimal digits only, any uint64 (ParseSeed).
CLI::Validator SeedValue();

}  // namespace gantry::cli
