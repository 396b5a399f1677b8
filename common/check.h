// CHECK macros for programmer invariants (never for bad input from outside, which
// travels as absl::Status). A failed CHECK prints file:line, the condition and any
// streamed message to stderr, then aborts. Debian 12's Abseil predates absl/log.
//
//   CHECK(ptr != nullptr) << "while binding " << name;
//   CHECK_EQ(a.numel(), b.numel());
// On failure only, CHECK_EQ and friends evaluate their operands a second time to print
// them: keep the operands free of side effects.
#pragma once

#include <sstream>
#include <string_view>

namespace gantry::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, std::string_view condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `CHECK(x) << ...` be a single expression of type void.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace gantry::internal

#define CHECK(cond)                \
  (cond) ? (void)0                 \
         : ::gantry::internal::Voidify() & \
               ::gantry::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#define GANTRY_CHECK_OP(a, b, op) \
  CHECK((a)op(b)) << "(" << (a) << " vs " << (b) << ") "
#define CHECK_EQ(a, b) GANTRY_CHECK_OP(a, b, ==)
#define CHECK_NE(a, b) GANTRY_CHECK_OP(a, b, !=)
#define CHECK_LT(a, b) GANTRY_CHECK_OP(a, b, <)
#define CHECK_LE(a, b) GANTRY_CHECK_OP(a, b, <=)
#define CHECK_GT(a, b) GANTRY_CHECK_OP(a, b, >)
#define CHECK_GE(a, b) GANTRY_CHECK_OP(a, b, >=)
