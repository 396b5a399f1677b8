// A strict reader of the Prometheus text exposition format (0.0.4) for the tests: it
// refuses what Prometheus would refuse or misread, so a test that parses /metrics checks
// the format, not only the numbers. Refused: a sample before its family's TYPE, a TYPE
// or HELP given twice, a family's samples split by another family, a bad metric or label
// name, an unknown escape in a label value, a value that is not a float, a histogram
// whose buckets are not cumulative or lack le="+Inf" equal to _count.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gantry::testing {

struct PromSample {
  std::string name;  // as written (with _bucket, _sum, _count)
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromFamily {
  std::string type, help;
};

struct Exposition {
  std::map<std::string, PromFamily> families;
  std::vector<PromSample> samples;

  // The samples named `name` whose labels include every one of `labels`.
  std::vector<PromSample> Find(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    std::vector<PromSample> out;
    for (const PromSample& s : samples) {
      bool match = s.name == name;
      for (const auto& [k, v] : labels) match = match && s.labels.count(k) && s.labels.at(k) == v;
      if (match) out.push_back(s);
    }
    return out;
  }
  // The one sample that matches, or nullopt when none or several do.
  std::optional<double> Value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    const std::vector<PromSample> found = Find(name, labels);
    if (found.size() != 1) return std::nullopt;
    return found[0].value;
  }
};

namespace prom_internal {

inline bool NameChar(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

inline bool ValidName(const std::string& s, bool colon) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!NameChar(s[i], i == 0, colon)) return false;
  }
  return true;
}

inline std::optional<double> ParseValue(const std::string& text) {
  if (text == "NaN") return NAN;
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// The family a sample name belongs to: itself, or for a histogram its base name.
inline std::string FamilyOf(const std::string& name, const std::map<std::string, PromFamily>& families) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto it = families.find(base);
      if (it != families.end() && it->second.type == "histogram") return base;
    }
  }
  return name;
}

}  // namespace prom_internal

// Parses `text`; on failure returns nullopt with the reason (and line) in `error`.
inline std::optional<Exposition> ParsePrometheusText(const std::string& text, std::string* error) {
  using namespace prom_internal;
  Exposition out;
  std::set<std::string> closed;  // families whose sample block has ended
  std::string current;           // family of the sample block in progress
  size_t line_no = 0;
  auto fail = [&](const std::string& why) {
    *error = "line " + std::to_string(line_no) + ": " + why;
    return std::nullopt;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) return fail("the last line has no newline");
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# HELP ", 0) != 0 && line.rfind("# TYPE ", 0) != 0) continue;  // a plain comment
      const bool help = line[2] == 'H';
      const std::string rest = line.substr(7);
      const size_t space = rest.find(' ');
      const std::string name = rest.substr(0, space);
      const std::string arg = space == std::string::npos ? "" : rest.substr(space + 1);
      if (!ValidName(name, true)) return fail("bad metric name '" + name + "'");
      if (closed.count(name) || current == name) return fail("HELP/TYPE of " + name + " after its samples");
      PromFamily& family = out.families[name];
      if (help) {
        if (!family.help.empty()) return fail("second HELP for " + name);
        for (size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] == '\\' && (i + 1 == arg.size() || (arg[i + 1] != '\\' && arg[i + 1] != 'n'))) {
            return fail("bad escape in HELP of " + name);
          }
          if (arg[i] == '\\') ++i;
        }
        family.help = arg.empty() ? " " : arg;
      } else {
        if (!family.type.empty()) return fail("second TYPE for " + name);
        if (arg != "counter" && arg != "gauge" && arg != "histogram" && arg != "summary" && arg != "untyped") {
          return fail("unknown type '" + arg + "'");
        }
        family.type = arg;
      }
      if (!current.empty()) closed.insert(current);
      current.clear();
      continue;
    }
    PromSample sample;
    size_t i = 0;
    while (i < line.size() && NameChar(line[i], i == 0, true)) ++i;
    sample.name = line.substr(0, i);
    if (!ValidName(sample.name, true)) return fail("bad sample name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t start = i;
        while (i < line.size() && NameChar(line[i], i == start, false)) ++i;
        const std::string label = line.substr(start, i - start);
        if (!ValidName(label, false)) return fail("bad label name in " + sample.name);
        if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return fail("expected =\" after " + label);
        i += 2;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) return fail("dangling escape");
            const char e = line[i + 1];
            if (e == '\\') value += '\\';
            else if (e == '"') value += '"';
            else if (e == 'n') value += '\n';
            else return fail(std::string("unknown escape \\") + e);
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.size()) return fail("unterminated label value");
        ++i;  // closing quote
        if (sample.labels.count(label)) return fail("label " + label + " twice");
        sample.labels[label] = value;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated label set");
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return fail("expected a space before the value");
    std::string value_text = line.substr(i + 1);
    if (const size_t sp = value_text.find(' '); sp != std::string::npos) value_text = value_text.substr(0, sp);
    const std::optional<double> value = ParseValue(value_text);
    if (!value) return fail("bad value '" + value_text + "'");
    sample.value = *value;
    const std::string family = FamilyOf(sample.name, out.families);
    auto it = out.families.find(family);
    if (it == out.families.end() || it->second.type.empty()) return fail("sample " + sample.name + " before its TYPE");
    if (closed.count(family)) return fail("samples of " + family + " split by another family");
    if (current != family) {
      if (!current.empty()) closed.insert(current);
      current = family;
    }
    out.samples.push_back(std::move(sample));
  }
  // Histograms: cumulative buckets ending in +Inf == _count, per label set.
  for (const auto& [name, family] : out.families) {
    if (family.type != "histogram") continue;
    std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>> buckets;
    for (const PromSample& s : out.Find(name + "_bucket")) {
      auto labels = s.labels;
      if (!labels.count("le")) return fail(name + "_bucket without le");
      const std::optional<double> le = ParseValue(labels["le"]);
      if (!le) return fail(name + "_bucket with le=" + labels["le"]);
      labels.erase("le");
      buckets[labels].emplace_back(*le, s.value);
    }
    for (const auto& [labels, list] : buckets) {
      for (size_t k = 1; k < list.size(); ++k) {
        if (!(list[k].first > list[k - 1].first) || list[k].second < list[k - 1].second) {
          return fail(name + ": buckets not increasing and cumulative");
        }
      }
      if (list.empty() || !std::isinf(list.back().first)) return fail(name + ": no le=\"+Inf\" bucket");
      double count = -1;
      for (const PromSample& s : out.Find(name + "_count")) {
        if (s.labels == labels) count = s.value;
      }
      if (count != list.back().second) return fail(name + ": +Inf bucket differs from _count");
    }
  }
  return out;
}

}  // namespace gantry::testing
