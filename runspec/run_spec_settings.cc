#include "runspec/run_spec_settings.h"

#include <algorithm>
#include <charconv>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gantry {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr char kBatchSizesField[] = "batch_sizes";
constexpr char kBatchSizeSetting[] = "batch-size";

std::string ShortestDouble(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

// The "value" field of a google.protobuf.*Value wrapper.
const FieldDescriptor* WrapperValue(const FieldDescriptor* field) {
  return field->message_type()->FindFieldByName("value");
}

std::string FormatWrapper(const Message& wrapper) {
  const FieldDescriptor* value = wrapper.GetDescriptor()->FindFieldByName("value");
  const Reflection* r = wrapper.GetReflection();
  switch (value->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return absl::StrCat(r->GetInt32(wrapper, value));
    case FieldDescriptor::CPPTYPE_INT64: return absl::StrCat(r->GetInt64(wrapper, value));
    case FieldDescriptor::CPPTYPE_UINT32: return absl::StrCat(r->GetUInt32(wrapper, value));
    case FieldDescriptor::CPPTYPE_UINT64: return absl::StrCat(r->GetUInt64(wrapper, value));
    case FieldDescriptor::CPPTYPE_DOUBLE: return ShortestDouble(r->GetDouble(wrapper, value));
    case FieldDescriptor::CPPTYPE_FLOAT: return ShortestDouble(r->GetFloat(wrapper, value));
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(wrapper, value) ? "true" : "false";
    default: return r->GetString(wrapper, value);
  }
}

absl::Status BadSetting(const std::string& setting, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat("--", setting, ": bad value '", value, "' (", expected, ")"));
}

absl::StatusOr<bool> ParseSwitch(const std::string& setting, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return BadSetting(setting, v, "true or false");
}

absl::Status SetWrapper(const std::string& setting, const std::string& v, Message* wrapper) {
  const FieldDescriptor* value = wrapper->GetDescriptor()->FindFieldByName("value");
  const Reflection* r = wrapper->GetReflection();
  switch (value->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t x = 0;
      if (!absl::SimpleAtoi(v, &x)) return BadSetting(setting, v, "an integer");
      r->SetInt32(wrapper, value, x);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t x = 0;
      if (!absl::SimpleAtoi(v, &x)) return BadSetting(setting, v, "an integer");
      r->SetInt64(wrapper, value, x);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t x = 0;
      if (!absl::SimpleAtoi(v, &x)) return BadSetting(setting, v, "a non-negative integer");
      r->SetUInt64(wrapper, value, x);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double x = 0;
      if (!absl::SimpleAtod(v, &x)) return BadSetting(setting, v, "a number");
      r->SetDouble(wrapper, value, x);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      absl::StatusOr<bool> x = ParseSwitch(setting, v);
      if (!x.ok()) return x.status();
      r->SetBool(wrapper, value, *x);
      return absl::OkStatus();
    }
    default:
      return absl::InternalError(absl::StrCat("RunSpec field of setting ", setting, " has an unsupported type"));
  }
}

absl::Status SetBatchSizes(const std::string& v, v1::RunSpec* spec) {
  spec->clear_batch_sizes();
  for (absl::string_view part : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
    int64_t b = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &b)) {
      return BadSetting(kBatchSizeSetting, v, "integers, comma-separated, e.g. 64 or 64,128,256,512");
    }
    spec->add_batch_sizes(b);
  }
  return absl::OkStatus();
}

}  // namespace

std::string SettingOfField(const std::string& field) {
  if (v1::RunSpec::descriptor()->FindFieldByName(field) == nullptr) return "";
  if (field == kBatchSizesField) return kBatchSizeSetting;
  std::string setting = field;
  std::replace(setting.begin(), setting.end(), '_', '-');
  return setting;
}

std::string FieldOfSetting(const std::string& setting) {
  std::string field = setting == kBatchSizeSetting ? kBatchSizesField : setting;
  std::replace(field.begin(), field.end(), '-', '_');
  if ((field == kBatchSizesField && setting != kBatchSizeSetting) ||
      v1::RunSpec::descriptor()->FindFieldByName(field) == nullptr) return "";
  return field;
}

std::vector<std::string> RunSpecSettingNames() {
  std::vector<std::string> names;
  const auto* d = v1::RunSpec::descriptor();
  for (int i = 0; i < d->field_count(); ++i) names.push_back(SettingOfField(d->field(i)->name()));
  return names;
}

SpecSettings RunSpecToSettings(const v1::RunSpec& spec) {
  SpecSettings settings;
  const auto* d = v1::RunSpec::descriptor();
  const Reflection* r = spec.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string setting = SettingOfField(f->name());
    if (f->is_repeated()) {
      if (r->FieldSize(spec, f) == 0) continue;
      std::vector<int64_t> values;
      for (int j = 0; j < r->FieldSize(spec, f); ++j) values.push_back(r->GetRepeatedInt64(spec, f, j));
      settings[setting] = absl::StrJoin(values, ",");
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (!r->GetString(spec, f).empty()) settings[setting] = r->GetString(spec, f);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (r->HasField(spec, f)) settings[setting] = FormatWrapper(r->GetMessage(spec, f));
    }
  }
  return settings;
}

absl::Status SetRunSpecSetting(const std::string& setting, const std::string& value, v1::RunSpec* spec) {
  const std::string field_name = FieldOfSetting(setting);
  if (field_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown setting '", setting, "' (a run spec takes: ", absl::StrJoin(RunSpecSettingNames(), ", "),
                     ")"));
  }
  if (field_name == kBatchSizesField) return SetBatchSizes(value, spec);
  const FieldDescriptor* f = v1::RunSpec::descriptor()->FindFieldByName(field_name);
  const Reflection* r = spec->GetReflection();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    r->SetString(spec, f, value);
    return absl::OkStatus();
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && WrapperValue(f) != nullptr) {
    return SetWrapper(setting, value, r->MutableMessage(spec, f));
  }
  return absl::InternalError(absl::StrCat("RunSpec field ", field_name, " has an unsupported type"));
}

}  // namespace gantry
