#include "worker/train/checkpoint_summary.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_codec.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/train/checkpoint_codec.h"
#include "worker/train/checkpoint_format.h"
#include "worker/train/checkpoint_store.h"

namespace gantry {
namespace {

bool IsStateSection(SectionTag tag) {
  return tag != SectionTag::kEpochRows && tag != SectionTag::kEpochInProgress && tag != SectionTag::kStragglerRows;
}

absl::StatusOr<std::string> CheckpointFileOf(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return path;
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, CheckpointStore(path + "/checkpoints").List());
  if (files.empty()) return absl::NotFoundError(absl::StrCat(path, ": holds no checkpoints/ckpt-*.bin"));
  return files.front().path;
}

}  // namespace

absl::StatusOr<std::string> CheckpointSummaryJson(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string file, CheckpointFileOf(path));
  ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(file));
  ASSIGN_OR_RETURN(const TrainingState state, DecodeCheckpoint(bytes, file));
  ASSIGN_OR_RETURN(const std::vector<SectionView> sections, UnframeCheckpoint(bytes, file));
  nlohmann::ordered_json j;
  j["file"] = file;
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
  nlohmann::ordered_json crcs;
  ByteWriter state_crcs;
  for (const SectionView& s : sections) {
    const uint32_t crc = Crc32(s.bytes);
    crcs[SectionName(s.tag)] = absl::StrFormat("%08x", crc);
    if (IsStateSection(s.tag)) state_crcs.U32(crc);
  }
  j["section_crc32"] = crcs;
  j["state_crc32"] = absl::StrFormat("%08x", Crc32(state_crcs.bytes()));
  return j.dump(2) + "\n";
}

}  // namespace gantry
