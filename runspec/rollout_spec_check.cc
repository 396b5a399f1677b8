#include "runspec/rollout_spec_check.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

absl::Status FieldError(const char* field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("rollout.", field, ": ", why));
}

bool IsBlendName(const std::string& name) { return name == "gaussian" || name == "linear" || name == "none"; }

}  // namespace

absl::Status CheckRolloutSpec(const v1::RolloutSpec& r) {
  if (r.source_job_id().empty()) return FieldError("source_job_id", "required: the id of the finished run to roll out");
  if (r.case_dir().empty()) return FieldError("case_dir", "required: a flow case folder written by make-flow");
  if (r.steps() < 1 || r.steps() > kMaxRolloutSteps) {
    return FieldError("steps", absl::StrCat(r.steps(), " is not in [1, ", kMaxRolloutSteps, "]"));
  }
  if (r.has_start_frame() && r.start_frame().value() < 0) {
    return FieldError("start_frame", absl::StrCat(r.start_frame().value(), " is negative; frames count from 0"));
  }
  if (r.has_tile() && r.tile().value() < 0) {
    return FieldError("tile",
                      absl::StrCat(r.tile().value(), " is negative; leave it unset for the model's image size"));
  }
  if (r.has_overlap() && r.overlap().value() < 0) {
    return FieldError("overlap", absl::StrCat(r.overlap().value(), " is negative"));
  }
  if (r.has_overlap() && r.has_tile() && r.tile().value() > 0 && r.overlap().value() >= r.tile().value()) {
    return FieldError("overlap", absl::StrCat(r.overlap().value(), " must be below the tile (", r.tile().value(), ")"));
  }
  if (!r.blend().empty() && !IsBlendName(r.blend())) {
    return FieldError("blend", absl::StrCat("'", r.blend(), "' is not gaussian, linear or none"));
  }
  if (r.has_group() && r.group().value() < 1) {
    return FieldError("group", absl::StrCat(r.group().value(), " tiles per group; give at least 1"));
  }
  if (r.has_tile_batch() && (r.tile_batch().value() < 1 || r.tile_batch().value() > kMaxRolloutTileBatch)) {
    return FieldError("tile_batch",
                      absl::StrCat(r.tile_batch().value(), " is not in [1, ", kMaxRolloutTileBatch, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckRolloutFitsRun(const v1::RolloutSpec& r, const TrainConfig& source, const std::string& source_id) {
  if (source.model != "pix2pix" || source.dataset != "flow") {
    return FieldError("source_job_id", absl::StrCat(source_id, " trained --model ", source.model, " on --dataset ",
                                                    source.dataset, ", not a next-frame model of flow fields; roll "
                                                    "out a run of --model pix2pix --dataset flow"));
  }
  const int64_t size = source.pix2pix.image_size;
  if (r.has_tile() && r.tile().value() != 0 && r.tile().value() != size) {
    return FieldError("tile", absl::StrCat(r.tile().value(), ": the model of ", source_id,
                                           " takes tiles of its --image-size ", size, "; use ", size,
                                           " (or leave it unset)"));
  }
  if (r.has_overlap() && r.overlap().value() >= size) {
    return FieldError("overlap", absl::StrCat(r.overlap().value(), " must be below the tile, ", source_id,
                                              "'s --image-size ", size, " [default: ", size / 4, "]"));
  }
  return absl::OkStatus();
}

std::string RolloutCaseName(const std::string& case_dir) {
  std::filesystem::path case_path = std::filesystem::path(case_dir).lexically_normal();
  if (case_path.filename().empty()) case_path = case_path.parent_path();  // "data/c/"
  return case_path.filename().string();
}

std::string RolloutOutputFolder(const std::string& run_dir, const std::string& case_dir) {
  return (std::filesystem::path(run_dir) / ("rollout-" + RolloutCaseName(case_dir))).string();
}

}  // namespace gantry
