#include "common/host_port.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gantry {

absl::Status CheckAddressPort(absl::string_view flag, absl::string_view address, PortZero zero) {
  const std::string range = zero == PortZero::kAnyFree ? "1..65535, or 0 for any free port" : "1..65535";
  const size_t colon = address.rfind(':');
  // A host alone ("127.0.0.1", "[::1]"): gRPC would listen on port 443 without a word.
  const bool host_only = colon == absl::string_view::npos || (!address.empty() && address.back() == ']');
  if (host_only) {
    if (zero == PortZero::kRefused) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", address, ": no port; give HOST:PORT with a port in ",
                                                   range, " (e.g. 127.0.0.1:50051, [::1]:50051)"));
  }
  const absl::string_view port = address.substr(colon + 1);
  if (port.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", address, ": no port after ':'; give HOST:PORT with a port in ", range));
  }
  // A signed number is a mistake too ("-1"), not a name for gRPC to puzzle over.
  const bool has_sign = port[0] == '-' || port[0] == '+';
  absl::string_view digits = has_sign ? port.substr(1) : port;
  if (digits.empty()) return absl::OkStatus();
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return absl::OkStatus();
  }
  // Leading zeros are fine; past 5 digits, the number is out of range whatever it is.
  const size_t first = digits.find_first_not_of('0');
  digits = first == absl::string_view::npos ? absl::string_view("0") : digits.substr(first);
  const long value = digits.size() > 5 ? 100000 : std::stol(std::string(digits));
  const bool allowed = !has_sign && ((value >= 1 && value <= 65535) || (value == 0 && zero == PortZero::kAnyFree));
  if (allowed) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(flag, " ", address, ": port ", port,
                                                 has_sign ? " is not a port number" : " is out of range",
                                                 "; give a port in ", range));
}

}  // namespace gantry
