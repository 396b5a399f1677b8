#include "worker/train/epoch_samples.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/eval/flow_validation.h"
#include "worker/monitor/sample_writer.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr int64_t kSampleCount = 64;                 // an 8x8 grid
constexpr int64_t kFlowSampleRows = 8;               // held-out pairs drawn per epoch (flow)
constexpr uint64_t kSampleStream = 0x73616d706cull;  // "sampl"
constexpr uint64_t kQualityStream = 0x7175616cull;   // "qual": the noise of --quality full
constexpr int64_t kFullQualitySamples = 1024;

}  // namespace

absl::Status EpochSamples::Write(GanModel& model, const std::string& png, const std::string& npy,
                                 EpochRow& row) const {
  if (held_out()) return WriteHeldOut(model, png, npy, row);
  if (model.SamplesFromData()) {
    return absl::InvalidArgumentError(absl::StrCat("--model ", model.name(),
                                                   " draws its samples from held-out rows, which --dataset ",
                                                   config_.dataset, " has not; use --dataset flow"));
  }
  Rng sample_rng(Mix64(config_.seed ^ kSampleStream));
  const Tensor sample_inputs = model.SampleInputs(sample_rng, kSampleCount);
  Tensor samples;
  RETURN_IF_ERROR(WriteGeneratorSamples(backend_, model.generator(), sample_inputs, png, npy, &samples));
  ScoreQuality(model, samples, row);
  return absl::OkStatus();
}

absl::Status EpochSamples::WriteHeldOut(GanModel& model, const std::string& png, const std::string& npy,
                                        EpochRow& row) const {
  ASSIGN_OR_RETURN(const NextFrameScore score, ScoreNextFrame(backend_, model.generator(), *validation_));
  row.val_l1 = score.l1;
  row.val_rel_l2 = score.relative_l2;
  row.val_persistence_l1 = score.persistence_l1;
  row.val_persistence_rel_l2 = score.persistence_relative_l2;
  spdlog::info("batch {} epoch {}: held-out next frame ({} pairs): L1 {:.5f}, relative L2 {:.5f} (persistence, "
               "copying the input frame: L1 {:.5f}, relative L2 {:.5f})",
               row.batch_size, row.epoch, score.rows, score.l1, score.relative_l2, score.persistence_l1,
               score.persistence_relative_l2);
  // The same first held-out pairs every epoch: input | prediction | truth.
  return WriteNextFrameSamples(backend_, model.generator(), *validation_, kFlowSampleRows, png, npy);
}

Tensor EpochSamples::FullQualitySamples(GanModel& model) const {
  // Its own fixed noise, the same every epoch, so the epochs' scores compare.
  Rng quality_rng(Mix64(config_.seed ^ kQualityStream));
  return GenerateImages(backend_, model.generator(), model.SampleInputs(quality_rng, kFullQualitySamples));
}

void EpochSamples::ScoreQuality(GanModel& model, const Tensor& samples, EpochRow& row) const {
  // The scorers' weights are host memory: a host backend scores, whatever trains.
  Backend& host = *FindBackend(DefaultBackendName());
  if (judge_ == nullptr && scorer_ != nullptr) {
    const Tensor scored = scorer_full_ ? FullQualitySamples(model) : samples;
    const absl::StatusOr<ImageQuality> q = scorer_->Score(host, scored.data(), scored.dim(0), *reference_);
    if (!q.ok()) {
      spdlog::warn("batch {} epoch {}: not scored: {}", row.batch_size, row.epoch, std::string(q.status().message()));
      return;
    }
    row.quality_fd = q->fd;
    row.quality_kid = q->kid;
    return;
  }
  if (judge_ == nullptr) return;
  const Tensor scored = judge_full_ ? FullQualitySamples(model) : samples;
  const QualityScores q = ScoreImages(host, *judge_, scored.data(), scored.dim(0));
  row.quality_fd = q.frechet;
  row.quality_class_entropy = q.classes.mean_entropy;
  row.quality_marginal_entropy = q.classes.marginal_entropy;
  row.quality_confidence = q.classes.mean_confidence;
}

}  // namespace gantry
