#include "cli/number_flag.h"

#include <string>

#include "absl/status/statusor.h"

namespace gantry::cli {
namespace {

// CLI11 prefixes a validator's message with the flag ("--count: "); the message is
// bounded_number.h's without its own name.
std::string WithoutName(const absl::Status& status) {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

}  // namespace

CLI::Validator IntegerIn(const IntRange& range) {
  return CLI::Validator(
      [range](std::string& input) -> std::string {
        const absl::StatusOr<int64_t> value = ParseIntIn("value", input, range);
        return value.ok() ? "" : WithoutName(value.status());
      },
      DescribeRange(range));
}

CLI::Validator SeedValue() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const absl::StatusOr<uint64_t> value = ParseSeed("value", input);
        return value.ok() ? "" : WithoutName(value.status());
      },
      kSeedRangeText);
}

}  // namespace gantry::cli
