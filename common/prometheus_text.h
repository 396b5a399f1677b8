// The Prometheus text exposition format (version 0.0.4), written by hand: a family is
// its `# HELP` and `# TYPE` lines followed by its samples, label values escaped
// (backslash, double quote, newline) and HELP text escaped (backslash, newline).
// Values print in Go's float syntax: NaN, +Inf, -Inf, else the shortest round-trip form
// (plain decimals between 1e-6 and 1e15).
//
// Not prometheus-cpp's TextSerializer (Debian's 1.0.1): it leaves HELP unescaped, writes
// NaN as "Nan" and values to 16 digits (not round-trip); docs/monitoring.md has the
// byte comparison of /metrics between the two.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

namespace gantry {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // Starts a family; every sample written until the next Family() belongs to it.
  // `name` must be a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*): a programmer's
  // invariant, CHECKed. A family that gets no sample still prints its HELP and TYPE.
  void Family(absl::string_view name, Type type, absl::string_view help);
  // One sample of the current family; `suffix` ("_bucket", "_sum", "_count") for
  // histograms. Label names are CHECKed like metric names.
  void Sample(const MetricLabels& labels, double value, absl::string_view suffix = "");

  // A histogram's samples from cumulative bucket counts: `upper_bounds[i]` with
  // `cumulative[i]`, then le="+Inf" with `count`, then _sum and _count.
  void Histogram(const MetricLabels& labels, const std::vector<double>& upper_bounds,
                 const std::vector<uint64_t>& cumulative, double sum, uint64_t count);

  const std::string& text() const { return text_; }

  static std::string EscapeLabelValue(absl::string_view value);
  static std::string EscapeHelp(absl::string_view help);
  static std::string FormatValue(double value);

 private:
  std::string text_;
  std::string family_;
};

}  // namespace gantry
