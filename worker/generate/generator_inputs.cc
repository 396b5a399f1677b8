#include "worker/generate/generator_inputs.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "runspec/generate_spec_check.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_pairs.h"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

absl::Status CheckCount(int64_t count, int64_t max_count, const char* what) {
  if (count < 1 || count > max_count) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", count, ": generate between 1 and ", max_count,
                                                   " samples at a time (more: several runs with different --seed)"));
  }
  return absl::OkStatus();
}

// "A,B" -> {A, B}: two rows in [0, INT64_MAX] (InterpolateEnds, which the coordinator
// checks alike), refused quoting the text as typed.
absl::StatusOr<std::pair<int64_t, int64_t>> ParseEnds(const std::string& text) {
  absl::StatusOr<std::pair<int64_t, int64_t>> ends = InterpolateEnds(text);
  if (!ends.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--interpolate ", ends.status().message(), " (e.g. --interpolate 3,17)"));
  }
  return ends;
}

// The noise file's rows, [N, dim].
absl::StatusOr<Tensor> ReadNoiseFile(const std::string& path, int64_t dim) {
  ASSIGN_OR_RETURN(NpyArray array, ReadNpy(path));
  std::vector<int64_t> shape = array.shape;
  if (shape.size() == 1) shape.insert(shape.begin(), 1);
  if (shape.size() != 2 || shape[1] != dim || shape[0] < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--noise-file ", path, " holds an array of shape (",
                                                   absl::StrJoin(array.shape, ", "), "); the generator takes rows of ",
                                                   dim, " values: give [N, ", dim, "]"));
  }
  for (float v : array.data) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError(absl::StrCat("--noise-file ", path, " holds ", v));
  }
  return Tensor::FromVector(Shape{shape[0], dim}, array.data);
}

// `steps` points from a to b on the great circle through them (a straight line when
// they are nearly parallel), in double precision.
Tensor Slerp(const float* a, const float* b, int64_t dim, int64_t steps) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < dim; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  const double norms = std::sqrt(aa * bb);
  const double omega = norms > 0 ? std::acos(std::clamp(ab / norms, -1.0, 1.0)) : 0.0;
  std::vector<float> rows(steps * dim);
  for (int64_t s = 0; s < steps; ++s) {
    const double t = static_cast<double>(s) / static_cast<double>(steps - 1);
    const bool linear = std::sin(omega) < 1e-6;
    const double wa = linear ? 1 - t : std::sin((1 - t) * omega) / std::sin(omega);
    const double wb = linear ? t : std::sin(t * omega) / std::sin(omega);
    for (int64_t i = 0; i < dim; ++i) rows[s * dim + i] = static_cast<float>(wa * a[i] + wb * b[i]);
  }
  return Tensor::FromVector(Shape{steps, dim}, rows);
}

absl::StatusOr<Tensor> Walk(const GanModel& model, const LatentRequest& r, int64_t dim, int64_t max_count) {
  ASSIGN_OR_RETURN(const auto ends, ParseEnds(r.interpolate));
  RETURN_IF_ERROR(CheckCount(r.steps, max_count, "--steps"));
  if (r.steps < 2) return absl::InvalidArgumentError("--steps 1: a walk needs both ends; use --steps 2 or more");
  if (r.count != kNotGiven) return absl::InvalidArgumentError("--count with --interpolate: the walk has --steps samples");
  const int64_t last = std::max(ends.first, ends.second);
  Tensor source;
  if (!r.noise_file.empty()) {
    ASSIGN_OR_RETURN(source, ReadNoiseFile(r.noise_file, dim));
  } else {
    // A seeded walk draws rows 0..last; compared without adding one (last may be INT64_MAX).
    if (last >= max_count) {
      return absl::InvalidArgumentError(absl::StrCat("--interpolate ", r.interpolate, ": row ", last,
                                                     " is past the seeded draw's rows 0 to ", max_count - 1,
                                                     " (a walk between rows of a --noise-file can reach further)"));
    }
    Rng rng(r.seed);
    source = model.SampleInputs(rng, last + 1);
  }
  if (last >= source.dim(0)) {
    return absl::InvalidArgumentError(absl::StrCat("--interpolate ", r.interpolate, ": row ", last, " is past the ",
                                                   source.dim(0), " rows of --noise-file ", r.noise_file));
  }
  return Slerp(source.data() + ends.first * dim, source.data() + ends.second * dim, dim, r.steps);
}

// The file's frames, [N, 4, S, S].
absl::StatusOr<Tensor> ConditionsFromFile(const std::string& path, int64_t s) {
  ASSIGN_OR_RETURN(NpyArray array, ReadNpy(path));
  std::vector<int64_t> shape = array.shape;
  if (shape.size() == 3) shape.insert(shape.begin(), 1);
  if (shape.size() != 4 || shape[0] < 1 || shape[1] != kFlowConditionChannels || shape[2] != s || shape[3] != s) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--condition ", path, " holds an array of shape (", absl::StrJoin(array.shape, ", "), "); the model takes [N, ",
        kFlowConditionChannels, ", ", s, ", ", s, "] (normalised ux, uy, vorticity and the obstacle mask at its "
        "--image-size)"));
  }
  // As --noise-file: a NaN or inf frame would make NaN samples, so it is refused by value.
  for (size_t i = 0; i < array.data.size(); ++i) {
    if (!std::isfinite(array.data[i])) {
      return absl::InvalidArgumentError(absl::StrCat("--condition ", path, " holds ", array.data[i], " at value ", i,
                                                     "; the frames must be finite numbers"));
    }
  }
  return Tensor::FromVector(Shape{shape[0], shape[1], s, s}, array.data);
}

// Rows [y0, y0 + s) and columns [x0, x0 + s) of each of `planes` planes of a
// `height` x `width` field, appended to `out`.
void CopyWindow(const float* field, int64_t planes, int64_t height, int64_t width, int64_t y0, int64_t x0, int64_t s,
                float* out) {
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < s; ++y) {
      std::copy_n(field + (p * height + y0 + y) * width + x0, s, out + (p * s + y) * s);
    }
  }
}

// `count` frames of the case from `first`, normalised, each with the mask: the centre
// s x s window of a larger field (training crops such windows anywhere in the field).
absl::StatusOr<Tensor> ConditionsFromCase(const std::string& dir, int64_t first, int64_t count, int64_t s) {
  ASSIGN_OR_RETURN(const FlowCase flow, LoadFlowCase(dir));
  if (flow.ny < s || flow.nx < s) {
    return absl::InvalidArgumentError(absl::StrCat("--case ", dir, ": its ", flow.ny, "x", flow.nx,
                                                   " field is smaller than the model's ", s, "x", s, " --image-size"));
  }
  if (first < 0 || first + count > flow.frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("--frame ", first, " --count ", count, ": ", dir, " has frames 0 to ", flow.frames - 1));
  }
  const int64_t y0 = (flow.ny - s) / 2, x0 = (flow.nx - s) / 2, window = s * s;
  std::vector<float> frame(flow.frame_numel());
  std::vector<float> rows(count * kFlowConditionChannels * window);
  for (int64_t i = 0; i < count; ++i) {
    float* row = rows.data() + i * kFlowConditionChannels * window;
    NormaliseFrame(flow, first + i, frame.data());
    CopyWindow(frame.data(), kFlowChannels, flow.ny, flow.nx, y0, x0, s, row);
    CopyWindow(flow.mask.data(), 1, flow.ny, flow.nx, y0, x0, s, row + kFlowChannels * window);
  }
  return Tensor::FromVector(Shape{count, kFlowConditionChannels, s, s}, rows);
}

}  // namespace

absl::StatusOr<Tensor> ConditionInputs(int64_t image_size, const ConditionRequest& r, int64_t max_count) {
  if (r.condition_file.empty() == r.case_dir.empty()) {
    return absl::InvalidArgumentError(
        "a next-frame model generates from condition frames: give --condition FILE.npy or --case DIR [--frame T]");
  }
  if (!r.condition_file.empty()) {
    ASSIGN_OR_RETURN(Tensor rows, ConditionsFromFile(r.condition_file, image_size));
    RETURN_IF_ERROR(CheckCount(rows.dim(0), max_count, "--condition frames"));
    if (r.count != kNotGiven && r.count != rows.dim(0)) {
      return absl::InvalidArgumentError(absl::StrCat("--count ", r.count, " but --condition ", r.condition_file,
                                                     " holds ", rows.dim(0), " frames; leave --count out"));
    }
    return rows;
  }
  const int64_t count = r.count == kNotGiven ? 1 : r.count;
  RETURN_IF_ERROR(CheckCount(count, max_count, "--count"));
  return ConditionsFromCase(r.case_dir, r.frame, count, image_size);
}

absl::StatusOr<Tensor> LatentInputs(const GanModel& model, const LatentRequest& r, int64_t max_count) {
  Rng probe(0);
  const int64_t dim = model.SampleInputs(probe, 1).dim(1);
  if (!r.interpolate.empty()) return Walk(model, r, dim, max_count);
  if (r.steps != 0) return absl::InvalidArgumentError("--steps is the length of an --interpolate walk; give both");
  if (!r.noise_file.empty()) {
    ASSIGN_OR_RETURN(Tensor rows, ReadNoiseFile(r.noise_file, dim));
    RETURN_IF_ERROR(CheckCount(rows.dim(0), max_count, "--noise-file rows"));
    if (r.count != kNotGiven && r.count != rows.dim(0)) {
      return absl::InvalidArgumentError(absl::StrCat("--count ", r.count, " but --noise-file ", r.noise_file,
                                                     " holds ", rows.dim(0), " rows; leave --count out"));
    }
    return rows;
  }
  if (r.count == kNotGiven) return absl::InvalidArgumentError("--count: say how many samples to generate");
  RETURN_IF_ERROR(CheckCount(r.count, max_count, "--count"));
  Rng rng(r.seed);
  return model.SampleInputs(rng, r.count);
}

}  // namespace gantry
