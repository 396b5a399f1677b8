// A command-line duration: a finite number of seconds within stated bounds, checked when
// the command line is parsed (exit code 2 with the flag's name). CLI::Range alone would
// let NaN through (it compares) and take inf.
#pragma once

#include "CLI/CLI.hpp"

namespace gantry::cli {

// Accepts a finite number in [least, most].
CLI::Validator SecondsIn(double least, double most);

}  // namespace gantry::cli
