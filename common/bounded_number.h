// Numbers given as text (a flag, a run-file value, a case-file entry) or as a field of a
// request, checked against a stated range in one way for every program: the worker's
// flags, the settings table that the CLI and the coordinator share, and the
// coordinator's request fields all refuse with the same words,
//     "NAME: bad value 'TEXT' (an integer in [LO, HI])",
// where NAME is the flag ("--straggler-window") or the field ("rollout.steps"). Values
// are parsed as int64 or double and compared before any narrowing, so 2147483648 is
// refused as out of range rather than wrapped; NaN, inf, 1e400, "0x10" and "1e3" as an
// integer are refused too.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gantry {

// Inclusive bounds of a whole number.
struct IntRange {
  int64_t lo = 0;
  int64_t hi = 0;
  bool Contains(int64_t v) const { return v >= lo && v <= hi; }
};

// Bounds of a real number; either end may be open (the value must differ from it).
struct RealRange {
  double lo = 0;
  double hi = 0;
  bool lo_open = false;
  bool hi_open = false;
  bool Contains(double v) const;
};

// "an integer in [1, 10000]", "a number in (0, 0.17]": what a refusal says is accepted.
std::string DescribeRange(const IntRange& range);
std::string DescribeRange(const RealRange& range);

// INVALID_ARGUMENT "NAME: bad value 'TEXT' (EXPECTED)", the text quoted printably and cut
// to a bounded excerpt (a value may be hostile: megabytes, control bytes, bad UTF-8).
absl::Status BadValue(absl::string_view name, absl::string_view text, absl::string_view expected);

// A decimal integer (optional sign, digits only, no surrounding space) within `range`.
absl::StatusOr<int64_t> ParseIntIn(absl::string_view name, absl::string_view text, const IntRange& range);
// A finite decimal number within `range`.
absl::StatusOr<double> ParseRealIn(absl::string_view name, absl::string_view text, const RealRange& range);

// A seed: decimal digits only (no sign), any uint64, "an integer in [0, 18446744073709551615]".
absl::StatusOr<uint64_t> ParseSeed(absl::string_view name, absl::string_view text);
inline constexpr char kSeedRangeText[] = "an integer in [0, 18446744073709551615]";

// For a value that arrived typed (a proto field): OK inside `range`, else BadValue.
absl::Status CheckIntIn(absl::string_view name, int64_t value, const IntRange& range);
absl::Status CheckRealIn(absl::string_view name, double value, const RealRange& range);

}  // namespace gantry
