#include "runspec/setting_table.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {

absl::Status Bad(const std::string& name, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat("--", name, ": bad value '", value, "' (", expected, ")"));
}

absl::StatusOr<int64_t> ParseInt(const std::string& name, const std::string& v, int64_t min) {
  int64_t out = 0;
  if (!absl::SimpleAtoi(v, &out) || out < min) return Bad(name, v, absl::StrCat("an integer >= ", min));
  return out;
}

absl::StatusOr<float> ParseFloat(const std::string& name, const std::string& v, float lo, float hi) {
  float out = 0;
  if (!absl::SimpleAtof(v, &out) || !std::isfinite(out) || out < lo || out > hi) {
    return Bad(name, v, absl::StrCat("a number in [", lo, ", ", hi, "]"));
  }
  return out;
}

absl::StatusOr<float> ParseFloatAbove(const std::string& name, const std::string& v, float lo, float hi,
                                      bool hi_open) {
  float out = 0;
  if (!absl::SimpleAtof(v, &out) || !std::isfinite(out) || !(out > lo) || out > hi || (hi_open && out == hi)) {
    return Bad(name, v, absl::StrCat("a number in (", lo, ", ", hi, hi_open ? ")" : "]"));
  }
  return out;
}

absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return Bad(name, v, "true or false");
}

absl::Status OneOf(const std::string& name, const std::string& v, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed) {
    if (v == a) return absl::OkStatus();
  }
  return Bad(name, v, absl::StrCat("one of ", absl::StrJoin(allowed, ", ")));
}

}  // namespace gantry
