// The numeric flags of a gantry-worker subcommand. CLI11 reads each as text; Parse()
// turns the given ones into numbers with common/bounded_number.h after the command line
// is read, so every bad value (abc, 1e400, NaN, 2147483648, -1 for a count, 0x10) is
// refused with one message naming the flag and its range, "--steps: bad value 'abc' (an
// integer in [1, 1000000])", and exit 2; nothing is narrowed, wrapped or read as octal.
// The ranges come from where the checks live (runspec/ for what the coordinator checks
// too, worker/flow/ for make-flow, worker/pool/ for serve), so a flag and a request
// field are refused alike. A flag that is not given leaves its target as it was.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "common/bounded_number.h"

namespace gantry {

class NumberFlags {
 public:
  explicit NumberFlags(CLI::App* command) : command_(command) {}

  // --flag, an integer in `range`; `help` gets the range appended.
  void Int(const std::string& flag, int64_t* target, const IntRange& range, const std::string& help);
  // The same into an int (`range` must lie within int's).
  void Int(const std::string& flag, int* target, const IntRange& range, const std::string& help);
  // --flag, a finite number in `range`.
  void Real(const std::string& flag, double* target, const RealRange& range, const std::string& help);
  // --flag, a seed: any uint64.
  void Seed(const std::string& flag, uint64_t* target, const std::string& help);

  // Parses every flag that was given into its target; the first bad value's refusal
  // (INVALID_ARGUMENT).
  absl::Status Parse() const;

 private:
  struct Flag {
    std::string name;  // "--steps"
    std::string text;  // as given; CLI11 writes it here
    CLI::Option* option = nullptr;
    std::function<absl::Status(const Flag&)> store;
  };
  void Add(const std::string& flag, const std::string& help, const std::string& range,
           std::function<absl::Status(const Flag&)> store);

  CLI::App* command_;
  std::vector<std::unique_ptr<Flag>> flags_;  // stable addresses: CLI11 keeps &Flag::text
};

}  // namespace gantry
