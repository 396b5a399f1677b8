// The building blocks of the table-driven run settings (train_config.cc and
// precision_settings.cc): a setting's name, help and default, its parser, and the value
// parsers, whose errors all read "--name: bad value 'v' (what is accepted)".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/bounded_number.h"

namespace gantry {

struct TrainConfig;

// The settings' names with their help text and default, in display order.
struct SettingInfo {
  std::string name;
  std::string help;
  std::string default_value;
  bool is_flag = false;  // a switch: "--sync-bn" alone means true
  // What values are accepted, e.g. "an integer in [1, 10000]" (numeric settings; empty for
  // the others): shown in --help and listed in docs/training.md (a test compares them).
  std::string range = {};
};

// Parses `value` of setting `name` into the configuration.
using Setter = std::function<absl::Status(const std::string& name, const std::string& value, TrainConfig&)>;

struct Setting {
  SettingInfo info;
  Setter apply;
};

// "--name: bad value 'v' (expected)" (common/bounded_number.h's words).
absl::Status Bad(const std::string& name, const std::string& value, const std::string& expected);
// A decimal integer in [min, max], compared before any narrowing.
absl::StatusOr<int64_t> ParseInt(const std::string& name, const std::string& v, int64_t min, int64_t max);
absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& v);
absl::Status OneOf(const std::string& name, const std::string& v, const std::vector<std::string>& allowed);

// A whole-number setting within `range`: the range is its SettingInfo::range, its
// refusal's words and the only bound, so help, docs and checks cannot disagree. `set`
// stores the parsed value (already known to be inside the range, so narrowing it to the
// field's type is exact).
Setting IntSetting(SettingInfo info, IntRange range, std::function<void(TrainConfig&, int64_t)> set);
// The same for a real number.
Setting RealSetting(SettingInfo info, RealRange range, std::function<void(TrainConfig&, double)> set);

}  // namespace gantry
