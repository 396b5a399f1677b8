#include "runspec/resume_rules.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::vector<std::string>& FreeOnResumeSettings() {
  static const auto* names =
      new std::vector<std::string>{"data-dir",         "progress-seconds", "comm-timeout", "checkpoint-every-steps",
                                   "keep-checkpoints", "tensorboard",      "watts-per-core",   "overlap",
                                   "bucket-mb"};
  return *names;
}

const std::vector<std::string>& ExtendableOnResumeSettings() {
  static const auto* names = new std::vector<std::string>{"epochs"};
  return *names;
}

ResumeRule ResumeRuleOf(const std::string& name) {
  if (name == "out" || Contains(FreeOnResumeSettings(), name)) return ResumeRule::kFree;
  if (Contains(ExtendableOnResumeSettings(), name)) return ResumeRule::kExtendable;
  return ResumeRule::kRecorded;
}

RawSettings SettingsRecordOf(const RawSettings& settings) {
  RawSettings record;
  for (const auto& [name, value] : settings) {
    if (ResumeRuleOf(name) != ResumeRule::kFree) record[name] = value;
  }
  return record;
}

std::string SettingsDigest(const RawSettings& record) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
    h ^= 0;  // a separator byte, so ("a", "bc") and ("ab", "c") differ
    h *= 0x100000001b3ull;
  };
  for (const auto& [name, value] : record) {
    mix(name);
    mix(value);
  }
  return absl::StrFormat("%016x", h);
}

std::string DescribeSettingValue(const std::string& name, const RawSettings& settings) {
  const auto it = settings.find(name);
  if (it != settings.end()) return it->second;
  const SettingInfo* info = FindSettingInfo(name);
  if (info == nullptr || info->default_value.empty()) return "not given (its default)";
  return absl::StrCat("not given (its default, ", info->default_value, ")");
}

std::vector<SettingChange> ChangedSettings(const RawSettings& before, const RawSettings& after) {
  std::set<std::string> names;
  for (const auto& [name, value] : before) names.insert(name);
  for (const auto& [name, value] : after) names.insert(name);
  const absl::StatusOr<TrainConfig> base = ResolveTrainConfig(before);
  std::vector<SettingChange> changes;
  for (const std::string& name : names) {
    const ResumeRule rule = ResumeRuleOf(name);
    if (rule == ResumeRule::kFree) continue;
    const auto b = before.find(name);
    const auto a = after.find(name);
    if (b != before.end() && a != after.end() && b->second == a->second) continue;
    RawSettings replaced = before;
    if (a == after.end()) {
      replaced.erase(name);
    } else {
      replaced[name] = a->second;
    }
    const absl::StatusOr<TrainConfig> changed = ResolveTrainConfig(replaced);
    if (base.ok() && changed.ok() && *base == *changed) continue;
    changes.push_back({name, rule, DescribeSettingValue(name, before), DescribeSettingValue(name, after)});
  }
  return changes;
}

int64_t EpochsOf(const RawSettings& settings) {
  const absl::StatusOr<TrainConfig> config = ResolveTrainConfig(settings);
  return config.ok() ? config->epochs : 0;
}

}  // namespace gantry
