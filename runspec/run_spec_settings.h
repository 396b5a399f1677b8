// A RunSpec as the worker's raw settings ("setting" -> "value", the strings
// `gantry-worker train` reads from its flags or a run file), and back.
//
// The mapping is by name, through protobuf reflection: field `data_dir` is setting
// `data-dir`, and `batch_sizes` is `batch-size` (values joined by commas). So the
// coordinator, the `gantry` CLI and the worker's pool mode all read a spec the way
// `gantry-worker train` reads its flags, and a field added to RunSpec needs no code here.
//
// This library depends on the generated proto only (not on the worker), so any of them
// can link it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gantry/v1/run_spec.pb.h"

namespace gantry {

using SpecSettings = std::map<std::string, std::string>;

// The settings of the fields that are set (see the presence rule in run_spec.proto).
// Numbers print in their shortest round-trip form; switches as "true"/"false".
SpecSettings RunSpecToSettings(const v1::RunSpec& spec);

// Sets the field of `setting` from its string form (as given on a command line or in a
// run file). INVALID_ARGUMENT naming the setting for an unknown setting or a value that
// does not parse as the field's type; ranges are the worker validator's business.
absl::Status SetRunSpecSetting(const std::string& setting, const std::string& value, v1::RunSpec* spec);

// The setting name of a RunSpec field ("data_dir" -> "data-dir") and back; empty when
// there is no such field.
std::string SettingOfField(const std::string& field);
std::string FieldOfSetting(const std::string& setting);

// Every setting a RunSpec can carry, in field order.
std::vector<std::string> RunSpecSettingNames();

}  // namespace gantry
