// The quality judge of a dataset (--quality): a small classifier built from gantry's own
// layers, trained once on the dataset's training images (`gantry-worker train-judge`),
// that scores generated images by comparison with the dataset's test images
// (quality_score.h). Architecture, on 1x28x28 images in [-1, 1]:
//   Conv 5x5 s2 1->16 . LeakyReLU(0.2) . Conv 5x5 s2 16->32 . LeakyReLU . Flatten 1568 .
//   Dense 1568->64 . LeakyReLU   (the 64 features the Fréchet distance compares) .
//   Dense 64->10                  (class logits)
// Trained with Adam and softmax cross-entropy from a fixed seed, on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/mnist_dataset.h"
#include "worker/eval/quality_score.h"
#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"
#include "worker/optim/optimizer.h"

namespace gantry {

inline constexpr int64_t kJudgeFeatures = 64;
inline constexpr int64_t kJudgeClasses = 10;
inline constexpr int64_t kJudgeSide = 28;

struct JudgeOptions {
  int64_t epochs = 2;
  int64_t batch_size = 64;
  float lr = 1e-3f;
  uint64_t seed = 1;
  // Below this test accuracy the judge is not worth caching (train-judge refuses).
  double min_accuracy = 0.85;
};

class Judge {
 public:
  Judge();  // an untrained network (zero weights)

  void Initialize(uint64_t seed);
  const FlatParameters& params() const { return *params_; }

  // Features [n, 64] and logits [n, 10] of n images (n x 784 floats, NCHW), inference.
  void Evaluate(Backend& backend, const float* images, int64_t n, std::vector<float>* features,
                std::vector<float>* logits) const;
  // One optimizer step on a batch of n images with their labels; the batch's mean loss.
  double TrainStep(Backend& backend, Optimizer& optimizer, const float* images, const std::vector<uint8_t>& labels);

  // What train-judge measured, saved with the weights.
  std::string dataset;           // "mnist" | "fashion-mnist"
  double test_accuracy = 0;
  FeatureStats test_features;    // of the test images

 private:
  Sequential features_;
  Sequential head_;
  std::unique_ptr<FlatParameters> params_;
};

// Trains a judge on `train` and measures it on `test` (accuracy and feature statistics);
// logs a line per epoch. INVALID_ARGUMENT for images that are not 1x28x28 or labels >= 10.
absl::StatusOr<std::unique_ptr<Judge>> TrainJudge(Backend& backend, const ImageDataset& train,
                                                  const ImageDataset& test, const std::string& dataset,
                                                  const JudgeOptions& options);

// The fraction of `data` the judge classifies right.
double JudgeAccuracy(Backend& backend, const Judge& judge, const ImageDataset& data);

// One epoch's quality: scores of n generated images (n x 784 floats in [-1, 1]).
struct QualityScores {
  double frechet = 0;
  ClassScores classes;
};
QualityScores ScoreImages(Backend& backend, const Judge& judge, const float* images, int64_t n);

}  // namespace gantry
