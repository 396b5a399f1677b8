// Fuzz target: RunSpec <-> settings (runspec/run_spec_settings.h), the path every job takes
// from the coordinator to a worker, and the validation of the settings that come out.
//
// Input: one mode byte, then bytes. Mode bit 0 clear: the bytes are a serialized RunSpec
// (what a coordinator stores and sends). Set: they are lines "setting=value", each set
// with SetRunSpecSetting the way a command line or run file would (refusals skipped).
//
// Invariants: RunSpecToSettings of any spec gives settings that SetRunSpecSetting
// accepts, one by one, into a spec whose settings are the same strings again (so a job
// means the same on both sides of the wire), and ResolveTrainConfig of those settings
// ends in a config or a status, never a crash.
#include <cstdint>
#include <string>

#include "absl/strings/str_split.h"
#include "gantry/v1/run_spec.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field that is not UTF-8 (and refuses the message): noise
  // at thousands of inputs a second.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  if (size == 0) return 0;
  gantry::v1::RunSpec spec;
  if ((data[0] & 1) == 0) {
    if (!spec.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  } else {
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      const std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      (void)gantry::SetRunSpecSetting(kv.first, kv.second, &spec);
    }
  }

  const gantry::SpecSettings settings = gantry::RunSpecToSettings(spec);
  gantry::v1::RunSpec back;
  for (const auto& [setting, value] : settings) {
    const absl::Status set = gantry::SetRunSpecSetting(setting, value, &back);
    FUZZ_EXPECT(set.ok(), std::string(set.message()).c_str());
  }
  FUZZ_EXPECT(gantry::RunSpecToSettings(back) == settings, "RunSpec -> settings -> RunSpec -> the same settings");

  const absl::StatusOr<gantry::TrainConfig> config = gantry::ResolveTrainConfig(settings);
  if (!config.ok()) FUZZ_EXPECT(!config.status().message().empty(), "an error says what is wrong");
  return 0;
}
