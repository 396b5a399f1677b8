#include "runspec/run_file.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/yaml.h"

namespace gantry {
namespace {

absl::Status Refuse(const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", what));
}

// The setting a key names: data_dir and data-dir are both "data-dir".
std::string SettingOfKey(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// A scalar as written, or a list of scalars joined with commas.
absl::StatusOr<std::string> ScalarOrList(const YAML::Node& node, const std::string& key, const std::string& name) {
  // An empty scalar ('', or a bare tag such as `!x`) is no value either.
  if (node.IsNull() || (node.IsScalar() && node.Scalar().empty())) {
    return Refuse(name, absl::StrCat("setting '", key, "' has no value"));
  }
  if (node.IsScalar()) return node.Scalar();
  if (!node.IsSequence()) {
    return Refuse(name, absl::StrCat("setting '", key, "' must be a value or a list of values, not a mapping"));
  }
  std::vector<std::string> parts;
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) {
      return Refuse(name, absl::StrCat("setting '", key, "' must be a list of plain values (no nested lists or maps)"));
    }
    if (item.Scalar().empty()) return Refuse(name, absl::StrCat("setting '", key, "' has an empty list entry"));
    parts.push_back(item.Scalar());
  }
  if (parts.empty()) return Refuse(name, absl::StrCat("setting '", key, "' is an empty list; give a value"));
  return absl::StrJoin(parts, ",");
}

}  // namespace

absl::StatusOr<RawSettings> ParseRunFile(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this one is "bad file", which sends people the wrong way.
    return Refuse(name, absl::StrCat("nested too deeply for the YAML parser (at line ", e.mark.line + 1,
                                     "); a run file is a flat mapping of setting: value pairs"));
  } catch (const YAML::Exception& e) {
    return Refuse(name, absl::StrCat("not valid YAML/JSON: ", e.what()));
  }
  if (!root.IsMap()) return Refuse(name, "expected a mapping of setting: value pairs");
  RawSettings raw;
  std::set<std::string> seen;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) return Refuse(name, "every key must be a setting name");
    const std::string key = kv.first.Scalar();
    const std::string setting = SettingOfKey(key);
    if (FindSettingInfo(setting) == nullptr) {
      return Refuse(name, absl::StrCat("unknown setting '", key, "' (see gantry-worker train --help)"));
    }
    if (!seen.insert(setting).second) {
      return Refuse(name, absl::StrCat("setting '", setting, "' is given twice; keep one"));
    }
    absl::StatusOr<std::string> value = ScalarOrList(kv.second, key, name);
    if (!value.ok()) return value.status();
    raw[setting] = *std::move(value);
  }
  return raw;
}

absl::StatusOr<RawSettings> ReadRunFile(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxRunFileBytes);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open run file (check the path)"));
  }
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat(bytes.status().message(), " (a run file is a small YAML or JSON file of setting: "
                                                               "value pairs)"));
  }
  return ParseRunFile(std::string(bytes->begin(), bytes->end()), path);
}

}  // namespace gantry
