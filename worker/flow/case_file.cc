#include "worker/flow/case_file.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_number.h"
#include "common/file_io.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/yaml.h"

namespace gantry::flow {
namespace {

absl::Status Reject(const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", what));
}

absl::StatusOr<double> Number(const YAML::Node& node, const std::string& where) {
  double v = 0;
  if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat(where, " must be a number"));
  }
  return v;
}

absl::StatusOr<int64_t> Whole(const YAML::Node& node, const std::string& where) {
  int64_t v = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &v)) {
    return absl::InvalidArgumentError(absl::StrCat(where, " must be a whole number"));
  }
  return v;
}

absl::Status Apply(const std::string& key, const YAML::Node& value, const std::string& where, FlowRequest* r) {
  auto as_int = [&](int* out) -> absl::Status {
    absl::StatusOr<int64_t> v = Whole(value, where);
    if (!v.ok()) return v.status();
    if (*v < -1000000000 || *v > 1000000000) return absl::InvalidArgumentError(absl::StrCat(where, " is out of range"));
    *out = static_cast<int>(*v);
    return absl::OkStatus();
  };
  auto as_double = [&](double* out) -> absl::Status {
    absl::StatusOr<double> v = Number(value, where);
    if (!v.ok()) return v.status();
    *out = *v;
    return absl::OkStatus();
  };
  if (key == "re") return as_double(&r->re);
  if (key == "diameter") return as_double(&r->diameter);
  if (key == "obstacle-x") return as_double(&r->obstacle_x);
  if (key == "obstacle-y") return as_double(&r->obstacle_y);
  if (key == "u-lattice") return as_double(&r->u_lattice);
  if (key == "warmup-periods") return as_double(&r->warmup_periods);
  if (key == "nx") return as_int(&r->nx);
  if (key == "ny") return as_int(&r->ny);
  if (key == "frames") return as_int(&r->frames);
  if (key == "every") return as_int(&r->every);
  if (key == "seed") {
    // Digits only: "-1" is refused, not wrapped to 2^64 - 1.
    absl::StatusOr<uint64_t> v = ParseSeed(where, value.IsScalar() ? value.Scalar() : std::string());
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(where, " must be a whole number 0 or more"));
    r->seed = *v;
    return absl::OkStatus();
  }
  if (key == "obstacle") {
    if (!value.IsScalar()) return absl::InvalidArgumentError(absl::StrCat(where, " must be cylinder or square"));
    r->obstacle = value.Scalar();
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(where, " is not a case setting (use re, obstacle, obstacle_x, obstacle_y, seed, diameter, u_lattice, nx, ny, "
                          "frames, every, warmup_periods)"));
}

}  // namespace

absl::StatusOr<std::vector<FlowRequest>> ParseCases(const std::string& text, const std::string& name,
                                                    const FlowRequest& base) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    return Reject(name, absl::StrCat("nested too deeply (at line ", e.mark.line + 1,
                                     "); a case file is a list of flat mappings"));
  } catch (const YAML::Exception& e) {
    return Reject(name, absl::StrCat("not valid YAML/JSON: ", e.what()));
  }
  if (!root.IsSequence() || root.size() == 0) {
    return Reject(name, "expected a non-empty list of cases, e.g. [{re: 80, seed: 1}, {re: 120, obstacle: square}]");
  }
  if (root.size() > kMaxCases) return Reject(name, absl::StrCat("more than ", kMaxCases, " cases; split the file"));
  std::vector<FlowRequest> cases;
  for (size_t k = 0; k < root.size(); ++k) {
    const YAML::Node entry = root[k];
    const std::string at = absl::StrCat("case ", k + 1);
    if (!entry.IsMap()) return Reject(name, absl::StrCat(at, " must be a mapping of setting: value"));
    FlowRequest r = base;
    std::set<std::string> seen;
    for (const auto& kv : entry) {
      if (!kv.first.IsScalar()) return Reject(name, absl::StrCat(at, ": every key must be a setting name"));
      std::string key = kv.first.Scalar();
      std::replace(key.begin(), key.end(), '_', '-');
      if (!seen.insert(key).second) return Reject(name, absl::StrCat(at, ": '", key, "' is given twice; keep one"));
      if (absl::Status st = Apply(key, kv.second, absl::StrCat(at, ": '", kv.first.Scalar(), "'"), &r); !st.ok()) {
        return Reject(name, std::string(st.message()));
      }
    }
    cases.push_back(r);
  }
  return cases;
}

absl::StatusOr<std::vector<FlowRequest>> ReadCases(const std::string& path, const FlowRequest& base) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxCaseFileBytes);
  if (!bytes.ok()) return bytes.status();
  return ParseCases(std::string(bytes->begin(), bytes->end()), path, base);
}

}  // namespace gantry::flow
