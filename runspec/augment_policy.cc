#include "runspec/augment_policy.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/bounded_number.h"

namespace gantry {
namespace {

constexpr char kOff[] = "off";

// Each transform's name and switch, in the order the transforms run.
constexpr std::array<std::pair<const char*, bool AugmentPolicy::*>, 3> kTransforms = {{
    {"color", &AugmentPolicy::color},
    {"translation", &AugmentPolicy::translation},
    {"cutout", &AugmentPolicy::cutout},
}};

std::string Accepted() {
  return absl::StrCat("off, or a comma-separated list of ", absl::StrJoin(AugmentTransformNames(), ", "),
                      ", each at most once");
}

}  // namespace

const std::vector<std::string>& AugmentTransformNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [name, member] : kTransforms) v->push_back(name);
    return v;
  }();
  return *names;
}

std::string AugmentPolicyName(const AugmentPolicy& policy) {
  std::vector<std::string> on;
  for (const auto& [name, member] : kTransforms) {
    if (policy.*member) on.push_back(name);
  }
  return on.empty() ? kOff : absl::StrJoin(on, ",");
}

absl::StatusOr<AugmentPolicy> ParseAugmentPolicy(const std::string& setting, const std::string& text) {
  if (absl::StripAsciiWhitespace(text) == kOff) return AugmentPolicy{};
  AugmentPolicy policy;
  int entry = 0;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    ++entry;
    const absl::string_view name = absl::StripAsciiWhitespace(part);
    if (name.empty()) return BadValue(setting, text, absl::StrCat("entry ", entry, " is empty; ", Accepted()));
    if (name == kOff) return BadValue(setting, text, absl::StrCat("off stands alone; ", Accepted()));
    const auto* transform = std::find_if(kTransforms.begin(), kTransforms.end(),
                                         [&](const auto& t) { return name == t.first; });
    // The entry itself is not repeated: BadValue quotes the whole value, bounded.
    if (transform == kTransforms.end()) {
      return BadValue(setting, text, absl::StrCat("entry ", entry, " is no transform; ", Accepted()));
    }
    bool& on = policy.*(transform->second);
    if (on) return BadValue(setting, text, absl::StrCat(transform->first, " appears twice; ", Accepted()));
    on = true;
  }
  return policy;
}

}  // namespace gantry
