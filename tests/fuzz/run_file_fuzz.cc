// Fuzz target: the run-file parser (runspec/run_file.h, YAML or JSON) and the validation of
// what it returns (ResolveTrainConfig).
//
// Input: the run file's text. Every input must parse or fail with a status, never crash
// or hang; parsed settings have non-empty names and values (the parser refuses empty
// ones), and resolving them into a TrainConfig ends in a config or a status.
#include <cstdint>
#include <string>

#include "runspec/run_file.h"
#include "runspec/train_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<gantry::RawSettings> settings = gantry::ParseRunFile(text, "fuzz.yaml");
  if (!settings.ok()) {
    FUZZ_EXPECT(!settings.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  for (const auto& [name, value] : *settings) {
    FUZZ_EXPECT(!name.empty(), "setting names are non-empty");
    FUZZ_EXPECT(!value.empty(), "setting values are non-empty");
  }
  const absl::StatusOr<gantry::TrainConfig> config = gantry::ResolveTrainConfig(*settings);
  if (!config.ok()) FUZZ_EXPECT(!config.status().message().empty(), "an error says what is wrong");
  return 0;
}
