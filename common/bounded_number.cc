#include "common/bounded_number.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

// The most characters of a refused value a message quotes.
constexpr size_t kMaxQuotedChars = 64;

// Digits with an optional sign in front, and nothing else: no space, no "0x", no "1e3".
bool IsDecimalInteger(absl::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// A number as a person writes it: digits, a point, an exponent; not "inf", "nan" or hex.
bool IsDecimalNumber(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
                    c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool RealRange::Contains(double v) const {
  if (!std::isfinite(v)) return false;
  if (lo_open ? !(v > lo) : !(v >= lo)) return false;
  return hi_open ? v < hi : v <= hi;
}

std::string DescribeRange(const IntRange& range) {
  return absl::StrCat("an integer in [", range.lo, ", ", range.hi, "]");
}

std::string DescribeRange(const RealRange& range) {
  return absl::StrCat("a number in ", range.lo_open ? "(" : "[", range.lo, ", ", range.hi, range.hi_open ? ")" : "]");
}

absl::Status BadValue(absl::string_view name, absl::string_view text, absl::string_view expected) {
  std::string quoted = EscapeForTerminal(text.substr(0, kMaxQuotedChars));
  if (text.size() > kMaxQuotedChars) absl::StrAppend(&quoted, "... (", text.size(), " characters)");
  return absl::InvalidArgumentError(absl::StrCat(name, ": bad value '", quoted, "' (", expected, ")"));
}

absl::StatusOr<int64_t> ParseIntIn(absl::string_view name, absl::string_view text, const IntRange& range) {
  int64_t value = 0;
  // SimpleAtoi fails on a number past int64 rather than wrapping it.
  if (!IsDecimalInteger(text) || !absl::SimpleAtoi(text, &value) || !range.Contains(value)) {
    return BadValue(name, text, DescribeRange(range));
  }
  return value;
}

absl::StatusOr<double> ParseRealIn(absl::string_view name, absl::string_view text, const RealRange& range) {
  double value = 0;
  if (!IsDecimalNumber(text) || !absl::SimpleAtod(text, &value) || !range.Contains(value)) {
    return BadValue(name, text, DescribeRange(range));
  }
  return value;
}

absl::StatusOr<uint64_t> ParseSeed(absl::string_view name, absl::string_view text) {
  uint64_t value = 0;
  const bool digits = !text.empty() && (text.front() != '-' && text.front() != '+') && IsDecimalInteger(text);
  if (!digits || !absl::SimpleAtoi(text, &value)) return BadValue(name, text, kSeedRangeText);
  return value;
}

absl::Status CheckIntIn(absl::string_view name, int64_t value, const IntRange& range) {
  if (range.Contains(value)) return absl::OkStatus();
  return BadValue(name, absl::StrCat(value), DescribeRange(range));
}

absl::Status CheckRealIn(absl::string_view name, double value, const RealRange& range) {
  if (range.Contains(value)) return absl::OkStatus();
  return BadValue(name, absl::StrCat(value), DescribeRange(range));
}

}  // namespace gantry
