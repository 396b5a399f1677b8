// The building blocks of the table-driven run settings (train_config.cc and
// precision_settings.cc): a setting's name, help and default, its parser, and the value
// parsers, whose errors all read "--name: bad value 'v' (what is accepted)".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct TrainConfig;

// The settings' names with their help text and default, in display order.
struct SettingInfo {
  std::string name;
  std::string help;
  std::string default_value;
  bool is_flag = false;  // a switch: "--sync-bn" alone means true
};

// Parses `value` of setting `name` into the configuration.
using Setter = std::function<absl::Status(const std::string& name, const std::string& value, TrainConfig&)>;

struct Setting {
  SettingInfo info;
  Setter apply;
};

absl::Status Bad(const std::string& name, const std::string& value, const std::string& expected);
absl::StatusOr<int64_t> ParseInt(const std::string& name, const std::string& v, int64_t min);
// A finite number in [lo, hi].
absl::StatusOr<float> ParseFloat(const std::string& name, const std::string& v, float lo, float hi);
// A finite number in (lo, hi], or in (lo, hi) when `hi_open`.
absl::StatusOr<float> ParseFloatAbove(const std::string& name, const std::string& v, float lo, float hi,
                                      bool hi_open = false);
absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& v);
absl::Status OneOf(const std::string& name, const std::string& v, const std::vector<std::string>& allowed);

}  // namespace gantry
