// Which run settings may change when a run is resumed, and the record of them that
// every checkpoint carries (docs/run-folder.md, "Settings on resume", lists them).
//
// Every setting of the table is one of three kinds on `--resume`:
//   - free: where things are found, how often the run reports or checkpoints and how long
//     it waits (--data-dir, --progress-seconds, ...); never what it computes. Taken from
//     the command line as given, not recorded.
//   - extendable: --epochs may grow (a run trained for more epochs continues where it
//     stood); the change is written to run.json and log.txt. Fewer epochs are refused.
//   - recorded: every other setting shapes what the run computes or how it is scored
//     (--lr, --lr-scaling, --base-batch-size, --quality, ...). A change is refused naming
//     the setting and both values; repeating the recorded value is no change.
// Values are compared by what they resolve to, not as text: `--base-batch-size 64` on a
// run that left it at its default 64, or `--lr 2e-4` on a run given `--lr 0.0002`, is the
// same value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runspec/train_config.h"

namespace gantry {

enum class ResumeRule { kRecorded, kFree, kExtendable };

ResumeRule ResumeRuleOf(const std::string& name);

// The free settings, in the table's order.
const std::vector<std::string>& FreeOnResumeSettings();
// The extendable settings (--epochs).
const std::vector<std::string>& ExtendableOnResumeSettings();

// The record a checkpoint carries: the settings of `settings` that are not free (and not
// `out`, the run folder, which may move), as given.
RawSettings SettingsRecordOf(const RawSettings& settings);

// A digest of a record: FNV-1a (64 bit) over its "name=value" pairs in name order, as 16
// hexadecimal digits. Two records with the same pairs have the same digest.
std::string SettingsDigest(const RawSettings& record);

// One setting whose value differs between two sets of settings.
struct SettingChange {
  std::string name;
  ResumeRule rule = ResumeRule::kRecorded;
  std::string before;  // DescribeSettingValue of the first set
  std::string after;   // of the second
};

// The setting's value in `settings` as a message shows it: the value given, or "its
// default X" when absent.
std::string DescribeSettingValue(const std::string& name, const RawSettings& settings);

// The non-free settings whose value in `after` resolves differently from `before`: each
// setting of either set is replaced alone in `before` by its value in `after` and the
// two configurations compared (so defaults and spellings of one number are no change).
// A value that does not resolve counts as a change.
std::vector<SettingChange> ChangedSettings(const RawSettings& before, const RawSettings& after);

// The resolved --epochs of `settings`, or 0 when they do not resolve.
int64_t EpochsOf(const RawSettings& settings);

}  // namespace gantry
