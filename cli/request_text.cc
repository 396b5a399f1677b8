#include "cli/request_text.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/printable_text.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gantry::cli {
namespace {

using google::protobuf::FieldDescriptor;

// What a person typed for a request field: the flag or argument.
std::string SourceOf(std::string path) {
  // A wrapper field (google.protobuf.StringValue) stands for its value.
  if (path.size() > 6 && path.compare(path.size() - 6, 6, ".value") == 0) path.resize(path.size() - 6);
  static const auto* const kSources = new std::map<std::string, std::string>{
      {"job_id", "the job id"},        {"name", "--name"},
      {"rollout.source_job_id", "the job id"}, {"rollout.case_dir", "--case"},
      {"rollout.blend", "--blend"},    {"page_token", "the page token"},
  };
  if (auto it = kSources->find(path); it != kSources->end()) return it->second;
  // A run spec's fields are its settings: spec.data_dir is --data-dir.
  if (path.rfind("spec.", 0) == 0 && path.find_first_of(".[", 5) == std::string::npos) {
    return absl::StrCat("--", absl::StrReplaceAll(path.substr(5), {{"_", "-"}}));
  }
  return absl::StrCat("request field ", path);
}

absl::Status CheckText(const std::string& path, const std::string& text) {
  const UnprintableByte bad = FindInvalidUtf8(text);
  if (!bad.found) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(SourceOf(path), ": not valid UTF-8 (", DescribeUnprintable(bad),
                                                 "); give it as UTF-8 text"));
}

absl::Status CheckMessage(const google::protobuf::Message& message, const std::string& prefix);

absl::Status CheckField(const google::protobuf::Message& message, const FieldDescriptor& field,
                        const std::string& path) {
  const google::protobuf::Reflection& r = *message.GetReflection();
  const bool repeated = field.is_repeated();
  const int count = repeated ? r.FieldSize(message, &field) : 1;
  for (int i = 0; i < count; ++i) {
    absl::Status s;
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING && field.type() == FieldDescriptor::TYPE_STRING) {
      s = CheckText(path, repeated ? r.GetRepeatedString(message, &field, i) : r.GetString(message, &field));
    } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && (repeated || r.HasField(message, &field))) {
      s = CheckMessage(repeated ? r.GetRepeatedMessage(message, &field, i) : r.GetMessage(message, &field),
                       path + ".");
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckMessage(const google::protobuf::Message& message, const std::string& prefix) {
  const google::protobuf::Descriptor& descriptor = *message.GetDescriptor();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor& field = *descriptor.field(i);
    if (absl::Status s = CheckField(message, field, prefix + field.name()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRequestText(const google::protobuf::Message& request) { return CheckMessage(request, ""); }

}  // namespace gantry::cli
