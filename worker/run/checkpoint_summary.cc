#include "worker/run/checkpoint_summary.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_codec.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_format.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/run/resume.h"

namespace gantry {
namespace {

// The sections state_crc32 covers: the training state, not the report of how it went
// (epoch rows and their appended columns hold times and energy, which differ run to run)
// nor the settings record (a run killed on purpose by --debug-crash-after-step records
// that switch; the state it resumes to is still the uninterrupted run's, bit for bit).
bool IsStateSection(SectionTag tag) {
  return tag != SectionTag::kEpochRows && tag != SectionTag::kEpochRowColumns &&
         tag != SectionTag::kEpochInProgress && tag != SectionTag::kStragglerRows && tag != SectionTag::kSettings;
}

// The checkpoint to describe: the file itself, or a run folder's newest usable one as
// --resume chooses it, with the newer files it passed over.
bool IsFolder(const std::string& path) {
  std::error_code ec;  // not throwing: a link loop is "not a folder", then refused as a file
  return std::filesystem::is_directory(path, ec);
}

absl::StatusOr<LoadedCheckpoint> ChooseCheckpoint(const std::string& path) {
  if (!IsFolder(path)) {
    LoadedCheckpoint one;
    one.path = path;
    ASSIGN_OR_RETURN(one.bytes, ReadFileBytes(path, kMaxCheckpointBytes));
    ASSIGN_OR_RETURN(one.state, DecodeCheckpoint(one.bytes, path));
    return one;
  }
  const CheckpointStore store(path + "/checkpoints");
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, store.List());
  if (files.empty()) return absl::NotFoundError(absl::StrCat(path, ": holds no checkpoints/ckpt-*.bin"));
  absl::StatusOr<CheckpointExpectations> run = RecordedExpectations(path);
  if (!run.ok()) {
    return absl::Status(run.status().code(), absl::StrCat("cannot tell which checkpoint of ", path,
                                                          " --resume would use: ", run.status().message()));
  }
  return store.LoadNewestUsable(*run);
}

}  // namespace

absl::StatusOr<std::string> CheckpointSummaryJson(const std::string& path) {
  ASSIGN_OR_RETURN(const LoadedCheckpoint chosen, ChooseCheckpoint(path));
  const std::string& file = chosen.path;
  const std::vector<uint8_t>& bytes = chosen.bytes;
  const TrainingState& state = chosen.state;
  ASSIGN_OR_RETURN(const std::vector<SectionView> sections, UnframeCheckpoint(bytes, file));
  nlohmann::ordered_json j;
  j["file"] = file;
  if (IsFolder(path)) {
    nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
    for (const PassedOver& p : chosen.passed_over) skipped.push_back({{"file", p.path}, {"why", p.fault}});
    j["skipped"] = skipped;  // newer checkpoint files --resume would pass over, newest first
  }
  j["format_version"] = kCheckpointVersion;
  j["bytes"] = bytes.size();
  const SweepPosition& p = state.position;
  j["position"] = {{"batch_index", p.batch_index}, {"batch_size", p.batch_size},     {"epoch", p.epoch},
                   {"step_in_epoch", p.step_in_epoch}, {"batch_step", p.batch_step}, {"run_step", p.run_step},
                   {"seed", p.seed},                 {"dataset_images", p.dataset_images}, {"world_size", p.world_size}};
  j["epoch_rows"] = state.rows.size();
  j["optimizer"] = state.g_opt.kind;
  j["loss_scale_g"] = state.g_scaler.scale;
  j["loss_scale_d"] = state.d_scaler.scale;
  j["generator_average"] = state.g_average.has_value();  // --g-ema
  j["augment"] = state.augment;                            // --augment
  // The settings record (runspec/resume_rules.h); null in a checkpoint from before it.
  j["settings"] = state.settings ? nlohmann::ordered_json(*state.settings) : nlohmann::ordered_json();
  nlohmann::ordered_json crcs;
  ByteWriter state_crcs;
  for (const SectionView& s : sections) {
    const uint32_t crc = Crc32(s.bytes);
    crcs[SectionName(s.tag)] = absl::StrFormat("%08x", crc);
    if (IsStateSection(s.tag)) state_crcs.U32(crc);
  }
  j["section_crc32"] = crcs;
  j["state_crc32"] = absl::StrFormat("%08x", Crc32(state_crcs.bytes()));
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gantry
