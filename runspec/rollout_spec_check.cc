#include "runspec/rollout_spec_check.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

absl::Status FieldError(const char* field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("rollout.", field, ": ", why));
}

bool IsBlendName(const std::string& name) { return name == "gaussian" || name == "linear" || name == "none"; }

}  // namespace

absl::Status CheckRolloutNumbers(const RolloutNumbers& n, RolloutNaming naming) {
  const bool flags = naming == RolloutNaming::kFlags;
  auto name = [flags](const char* flag, const char* field) {
    return flags ? absl::StrCat("--", flag) : absl::StrCat("rollout.", field);
  };
  RETURN_IF_ERROR(CheckIntIn(name("steps", "steps"), n.steps, kRolloutSteps));
  const struct {
    const char *flag, *field;
    const std::optional<int64_t>& value;
    const IntRange& range;
  } optional[] = {{"start-frame", "start_frame", n.start_frame, kRolloutStartFrame},
                  {"tile", "tile", n.tile, kRolloutTile},
                  {"overlap", "overlap", n.overlap, kRolloutOverlap},
                  {"group", "group", n.group, kRolloutGroup},
                  {"tile-batch", "tile_batch", n.tile_batch, kRolloutTileBatch},
                  {"report-every", "report_every", n.report_every, kRolloutReportEvery}};
  for (const auto& o : optional) {
    if (o.value) RETURN_IF_ERROR(CheckIntIn(name(o.flag, o.field), *o.value, o.range));
  }
  if (n.overlap && n.tile && *n.tile > 0 && *n.overlap >= *n.tile) {
    return absl::InvalidArgumentError(absl::StrCat(name("overlap", "overlap"), ": ", *n.overlap,
                                                   " must be below the tile (", *n.tile, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckRolloutSpec(const v1::RolloutSpec& r) {
  if (r.source_job_id().empty()) return FieldError("source_job_id", "required: the id of the finished run to roll out");
  if (r.case_dir().empty()) return FieldError("case_dir", "required: a flow case folder written by make-flow");
  RolloutNumbers n{.steps = r.steps()};
  if (r.has_start_frame()) n.start_frame = r.start_frame().value();
  if (r.has_tile()) n.tile = r.tile().value();
  if (r.has_overlap()) n.overlap = r.overlap().value();
  if (r.has_group()) n.group = r.group().value();
  if (r.has_tile_batch()) n.tile_batch = r.tile_batch().value();
  if (r.has_report_every()) n.report_every = r.report_every().value();
  RETURN_IF_ERROR(CheckRolloutNumbers(n, RolloutNaming::kFields));
  if (!r.blend().empty() && !IsBlendName(r.blend())) {
    return FieldError("blend", absl::StrCat("'", r.blend(), "' is not gaussian, linear or none"));
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

std::string RolloutJobOutputFolder(const std::string& run_dir, const std::string& case_dir, const std::string& job_id) {
  return absl::StrCat(RolloutOutputFolder(run_dir, case_dir), "-", job_id);
}

}  // namespace gantry
