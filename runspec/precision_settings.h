// The mixed-precision settings of gantry-worker train (flags and run-file keys), in the
// table format of train_config.cc, and the defaults and checks that depend on more than
// one of them.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "runspec/setting_table.h"
#include "runspec/train_config.h"

namespace gantry {

// --precision, --loss-scale and its dynamic-scaling parameters, --allreduce-dtype.
const std::vector<Setting>& PrecisionSettings();
// The debug switches of the forced overflow (--debug-inject-inf-*).
const std::vector<Setting>& InjectInfSettings();

// Runs after every setting in `given` was applied: gives --loss-scale and
// --allreduce-dtype their precision-dependent defaults when not given, and refuses
// combinations that cannot mean what the user wrote (dynamic-only parameters with a
// static or no scale; a forced overflow with nothing to skip the step).
absl::Status FinishPrecisionSettings(const RawSettings& given, MixedPrecision& mixed);

}  // namespace gantry
