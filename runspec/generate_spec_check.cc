#include "runspec/generate_spec_check.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

absl::Status Invalid(const char* field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("generate.", field, ": ", why));
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

absl::Status CheckName(const std::string& name) {
  if (name.size() > kMaxGenerateNameChars || name == "." || name == "..") {
    return Invalid("name", absl::StrCat("'", name, "' must be at most ", kMaxGenerateNameChars,
                                           " characters and not . or .."));
  }
  for (char c : name) {
    if (!IsNameChar(c)) return Invalid("name", absl::StrCat("'", name, "': use letters, digits, '.', '_', '-'"));
  }
  return absl::OkStatus();
}

absl::Status CheckWalk(const v1::GenerateSpec& g) {
  const absl::StatusOr<std::pair<int64_t, int64_t>> ends = InterpolateEnds(g.interpolate());
  if (!ends.ok()) return Invalid("interpolate", std::string(ends.status().message()));
  // A submission's walk is between rows of the seeded draw (it has no noise file), which
  // the worker draws at most kMaxGenerateSamples of; compared without adding one.
  const int64_t last = std::max(ends->first, ends->second);
  if (last >= kMaxGenerateSamples) {
    return Invalid("interpolate", absl::StrCat("'", g.interpolate(), "': row ", last,
                                               " is past the seeded draw's rows 0 to ", kMaxGenerateSamples - 1));
  }
  if (!g.has_steps() || g.steps().value() < 2 || g.steps().value() > kMaxGenerateSamples) {
    return Invalid("steps", absl::StrCat("a walk needs 2 to ", kMaxGenerateSamples, " points"));
  }
  if (g.has_count()) return Invalid("count", "leave it unset with interpolate: the walk has `steps` samples");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::pair<int64_t, int64_t>> InterpolateEnds(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ',');
  constexpr IntRange kRow{0, std::numeric_limits<int64_t>::max()};
  if (parts.size() == 2) {
    const absl::StatusOr<int64_t> a = ParseIntIn("A", parts[0], kRow);
    const absl::StatusOr<int64_t> b = ParseIntIn("B", parts[1], kRow);
    if (a.ok() && b.ok()) return std::make_pair(*a, *b);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", text, "': give two latent rows as A,B, whole numbers from 0 to ", kRow.hi));
}

namespace {

absl::Status CheckNumbers(const v1::GenerateSpec& g) {
  if (g.has_count()) RETURN_IF_ERROR(CheckIntIn("generate.count", g.count().value(), kGenerateCount));
  if (g.has_checkpoint()) RETURN_IF_ERROR(CheckIntIn("generate.checkpoint", g.checkpoint().value(), kCheckpointStep));
  if (!g.precision().empty() && g.precision() != "fp32" && g.precision() != "bf16") {
    return Invalid("precision", absl::StrCat("'", g.precision(), "' is not fp32 or bf16"));
  }
  if (g.has_batch()) RETURN_IF_ERROR(CheckIntIn("generate.batch", g.batch().value(), kGenerateBatch));
  if (g.has_frame()) RETURN_IF_ERROR(CheckIntIn("generate.frame", g.frame().value(), kGenerateFrame));
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGenerateSpec(const v1::GenerateSpec& g) {
  if (g.source_job_id().empty()) return Invalid("source_job_id", "required: the id of the finished run to sample");
  if (absl::Status s = CheckName(g.name()); !s.ok()) return s;
  if (absl::Status s = CheckNumbers(g); !s.ok()) return s;
  if (!g.interpolate().empty()) return CheckWalk(g);
  if (g.has_steps()) return Invalid("steps", "the length of an interpolate walk; give interpolate too");
  return absl::OkStatus();
}

absl::Status CheckGenerateFitsRun(const v1::GenerateSpec& g, const TrainConfig& source, const std::string& source_id) {
  if (source.model == "pix2pix") {
    if (g.case_dir().empty()) {
      return Invalid("case_dir", absl::StrCat(source_id, " trained a next-frame model: give the flow case whose "
                                                            "frames it generates from"));
    }
    if (!g.interpolate().empty()) {
      return Invalid("interpolate", absl::StrCat(source_id, " trained a next-frame model, which has no latent "
                                                               "vectors to walk between"));
    }
    return absl::OkStatus();
  }
  if (!g.case_dir().empty()) {
    return Invalid("case_dir", absl::StrCat(source_id, " trained --model ", source.model,
                                               ", which generates from latent vectors: leave case_dir unset"));
  }
  if (!g.has_count() && g.interpolate().empty()) {
    return Invalid("count", absl::StrCat("say how many samples to draw from ", source_id));
  }
  return absl::OkStatus();
}

std::string GenerateOutputFolder(const std::string& run_dir, const std::string& name) {
  return (std::filesystem::path(run_dir) / ("generate-" + name)).string();
}

}  // namespace gantry
