// Rank 0, at the end of every epoch: what the epoch's generator makes, written to the
// run folder and scored into the epoch's row.
//   - flow runs (held-out rows set): the held-out next-frame error (val_* columns), and
//     the first held-out pairs drawn as input | prediction | truth;
//   - image runs: the model's 8x8 sample grid from fixed noise (the same every epoch),
//     scored by the quality judge when one is set (quality_* columns), or else by the
//     label-free score when one is set (your own images: quality_fd and quality_kid).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "report/epoch_metrics.h"
#include "runspec/train_config.h"
#include "worker/data/mnist_dataset.h"
#include "worker/eval/judge.h"
#include "worker/eval/random_feature_scorer.h"
#include "worker/models/gan_model.h"
#include "worker/tensor/backend.h"

namespace gantry {

class EpochSamples {
 public:
  // References must outlive this object.
  EpochSamples(const TrainConfig& config, Backend& backend) : config_(config), backend_(backend) {}

  // Scores each epoch's samples with `judge` (not owned; null: no scores), on the 64
  // fixed-noise samples, or with `full` on 1024 of them.
  void set_judge(const Judge* judge, bool full) {
    judge_ = judge;
    judge_full_ = full;
  }
  // Scores each epoch's samples without labels (when no judge is set): the Fréchet
  // distance and KID of `scorer`'s features against `reference` (neither owned; null:
  // no scores), on the 64 fixed-noise samples, or with `full` on 1024 of them.
  void set_feature_scorer(const RandomFeatureScorer* scorer, const ReferenceFeatures* reference, bool full) {
    scorer_ = scorer;
    reference_ = reference;
    scorer_full_ = full;
  }
  // Held-out rows {7, S, S} of --dataset flow (not owned; null or empty: none).
  void set_validation(const ImageDataset* rows) { validation_ = rows; }
  bool held_out() const { return validation_ != nullptr && validation_->count > 0; }

  // Writes the samples of `model`'s generator to `png` and `npy` and fills the row's
  // scores. INVALID_ARGUMENT for a model that draws its samples from held-out rows when
  // there are none.
  absl::Status Write(GanModel& model, const std::string& png, const std::string& npy, EpochRow& row) const;

 private:
  absl::Status WriteHeldOut(GanModel& model, const std::string& png, const std::string& npy, EpochRow& row) const;
  void ScoreQuality(GanModel& model, const Tensor& samples, EpochRow& row) const;
  // The 1024 fixed-noise samples of --quality full (the same noise every epoch).
  Tensor FullQualitySamples(GanModel& model) const;

  const TrainConfig& config_;
  Backend& backend_;
  const Judge* judge_ = nullptr;
  bool judge_full_ = false;
  const RandomFeatureScorer* scorer_ = nullptr;
  const ReferenceFeatures* reference_ = nullptr;
  bool scorer_full_ = false;
  const ImageDataset* validation_ = nullptr;
};

}  // namespace gantry
