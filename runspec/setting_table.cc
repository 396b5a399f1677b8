#include "runspec/setting_table.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {

absl::Status Bad(const std::string& name, const std::string& value, const std::string& expected) {
  return BadValue(absl::StrCat("--", name), value, expected);
}

absl::StatusOr<int64_t> ParseInt(const std::string& name, const std::string& v, int64_t min, int64_t max) {
  return ParseIntIn(absl::StrCat("--", name), v, IntRange{min, max});
}

Setting IntSetting(SettingInfo info, IntRange range, std::function<void(TrainConfig&, int64_t)> set) {
  info.range = DescribeRange(range);
  return Setting{std::move(info), [range, set = std::move(set)](const std::string& n, const std::string& v,
                                                               TrainConfig& c) -> absl::Status {
                   absl::StatusOr<int64_t> value = ParseInt(n, v, range.lo, range.hi);
                   if (!value.ok()) return value.status();
                   set(c, *value);
                   return absl::OkStatus();
                 }};
}

Setting RealSetting(SettingInfo info, RealRange range, std::function<void(TrainConfig&, double)> set) {
  info.range = DescribeRange(range);
  return Setting{std::move(info), [range, set = std::move(set)](const std::string& n, const std::string& v,
                                                               TrainConfig& c) -> absl::Status {
                   absl::StatusOr<double> value = ParseRealIn(absl::StrCat("--", n), v, range);
                   if (!value.ok()) return value.status();
                   set(c, *value);
                   return absl::OkStatus();
                 }};
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
