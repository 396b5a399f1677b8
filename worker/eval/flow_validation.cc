#include "worker/eval/flow_validation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/data/flow_pairs.h"
#include "worker/formats/npy.h"
#include "worker/monitor/flow_strip.h"

namespace gantry {
namespace {

// G's predictions ([n, 3, S, S], host) for rows [first, first + n).
absl::StatusOr<Tensor> Predict(Backend& backend, const Sequential& generator, const ImageDataset& rows, int64_t first,
                               int64_t n) {
  if (rows.channels != kFlowRowChannels || rows.height != rows.width) {
    return absl::InvalidArgumentError(absl::StrCat("validation rows of ", rows.channels, "x", rows.height, "x",
                                                   rows.width, " are not flow pairs {7, S, S}"));
  }
  const int64_t s = rows.height;
  const int64_t plane = s * s;
  std::vector<float> condition(n * kFlowConditionChannels * plane);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = rows.pixels.data() + (first + i) * rows.sample_numel();
    std::copy_n(row, kFlowConditionChannels * plane, condition.data() + i * kFlowConditionChannels * plane);
  }
  Context ctx;
  ctx.backend = &backend;
  ctx.training = false;
  ctx.param_grads = false;
  SequentialCache cache;
  const Tensor x = Tensor::FromVector(Shape{n, kFlowConditionChannels, s, s}, condition).On(backend.device());
  Tensor y = generator.Forward(ctx, x, &cache).On(Device::kCpu);
  if (y.numel() != n * kFlowChannels * plane) {
    return absl::InternalError(absl::StrCat("the generator gave ", y.shape().ToString(), " for ", n, " conditions of ",
                                            s, "x", s));
  }
  return y;
}

}  // namespace

absl::StatusOr<NextFrameScore> ScoreNextFrame(Backend& backend, const Sequential& generator, const ImageDataset& rows,
                                              int64_t batch) {
  NextFrameScore score;
  const int64_t plane = rows.height * rows.width;
  double abs_sum = 0, err_sq = 0, ref_sq = 0, still_abs_sum = 0, still_err_sq = 0;
  for (int64_t first = 0; first < rows.count; first += batch) {
    const int64_t n = std::min(batch, rows.count - first);
    ASSIGN_OR_RETURN(const Tensor y, Predict(backend, generator, rows, first, n));
    for (int64_t i = 0; i < n; ++i) {
      const float* input = rows.pixels.data() + (first + i) * rows.sample_numel();  // the frame: channels 0-2
      const float* truth = input + kFlowConditionChannels * plane;
      const float* pred = y.data() + i * kFlowChannels * plane;
      for (int64_t k = 0; k < kFlowChannels * plane; ++k) {
        const double d = static_cast<double>(pred[k]) - truth[k];
        abs_sum += std::abs(d);
        err_sq += d * d;
        ref_sq += static_cast<double>(truth[k]) * truth[k];
        const double still = static_cast<double>(input[k]) - truth[k];
        still_abs_sum += std::abs(still);
        still_err_sq += still * still;
      }
    }
  }
  score.rows = rows.count;
  const double values = static_cast<double>(rows.count * kFlowChannels * plane);
  score.l1 = values > 0 ? abs_sum / values : 0;
  score.relative_l2 = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : 0;
  score.persistence_l1 = values > 0 ? still_abs_sum / values : 0;
  score.persistence_relative_l2 = ref_sq > 0 ? std::sqrt(still_err_sq / ref_sq) : 0;
  return score;
}

absl::Status WriteNextFrameSamples(Backend& backend, const Sequential& generator, const ImageDataset& rows,
                                   int64_t count, const std::string& png_path, const std::string& npy_path) {
  const int64_t n = std::min(count, rows.count);
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat(png_path, ": no validation rows to draw"));
  ASSIGN_OR_RETURN(const Tensor y, Predict(backend, generator, rows, 0, n));
  const int64_t s = rows.height;
  const int64_t plane = s * s;
  std::vector<const float*> panels;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = rows.pixels.data() + i * rows.sample_numel();
    panels.push_back(row + 2 * plane);                                   // input vorticity
    panels.push_back(y.data() + (i * kFlowChannels + 2) * plane);        // predicted
    panels.push_back(row + (kFlowConditionChannels + 2) * plane);        // true
  }
  RETURN_IF_ERROR(WriteFieldStrip(png_path, panels, n, 3, s, s, 1.0f));
  return WriteNpy(npy_path, y.data(), {n, kFlowChannels, s, s});
}

}  // namespace gantry
