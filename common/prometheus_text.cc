#include "common/prometheus_text.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace gantry {
namespace {

bool ValidName(absl::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

const char* TypeName(PrometheusText::Type type) {
  switch (type) {
    case PrometheusText::Type::kCounter: return "counter";
    case PrometheusText::Type::kGauge: return "gauge";
    case PrometheusText::Type::kHistogram: return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string PrometheusText::EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string PrometheusText::EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string PrometheusText::FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest form that reads back exactly; plain decimals in the usual range (bucket
  // bounds read le="0.0005", not le="5e-04").
  char buffer[400];
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e15);
  const auto result = fixed ? std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

void PrometheusText::Family(absl::string_view name, Type type, absl::string_view help) {
  CHECK(ValidName(name, /*allow_colon=*/true)) << "metric name " << name;
  family_ = std::string(name);
  absl::StrAppend(&text_, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ", name, " ", TypeName(type), "\n");
}

void PrometheusText::Sample(const MetricLabels& labels, double value, absl::string_view suffix) {
  CHECK(!family_.empty()) << "Sample before Family";
  absl::StrAppend(&text_, family_, suffix);
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      CHECK(ValidName(labels[i].first, /*allow_colon=*/false)) << "label name " << labels[i].first;
      absl::StrAppend(&text_, i > 0 ? "," : "", labels[i].first, "=\"", EscapeLabelValue(labels[i].second), "\"");
    }
    text_ += '}';
  }
  absl::StrAppend(&text_, " ", FormatValue(value), "\n");
}

void PrometheusText::Histogram(const MetricLabels& labels, const std::vector<double>& upper_bounds,
                               const std::vector<uint64_t>& cumulative, double sum, uint64_t count) {
  CHECK(upper_bounds.size() == cumulative.size()) << "one count per bucket";
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    MetricLabels with_le = labels;
    with_le.emplace_back("le", FormatValue(upper_bounds[i]));
    Sample(with_le, static_cast<double>(cumulative[i]), "_bucket");
  }
  MetricLabels with_inf = labels;
  with_inf.emplace_back("le", "+Inf");
  Sample(with_inf, static_cast<double>(count), "_bucket");
  Sample(labels, sum, "_sum");
  Sample(labels, static_cast<double>(count), "_count");
}

}  // namespace gantry
