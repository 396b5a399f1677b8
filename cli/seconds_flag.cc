#include "cli/seconds_flag.h"

#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry::cli {

CLI::Validator SecondsIn(double least, double most) {
  const std::string range = absl::StrCat("[", least, ", ", most, "]");
  return CLI::Validator(
      [least, most, range](std::string& input) -> std::string {
        double value = 0;
        if (absl::SimpleAtod(input, &value) && std::isfinite(value) && value >= least && value <= most) return "";
        return absl::StrCat("'", input, "' is not a number of seconds in ", range);
      },
      absl::StrCat("SECONDS in ", range));
}

}  // namespace gantry::cli
