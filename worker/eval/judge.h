// The quality judge of a dataset (--quality): a small classifier built from gantry's own
// layers, trained once on the dataset's labelled training images (`gantry-worker
// train-judge`), that scores generated images by comparison with the dataset's test
// images (quality_score.h). It takes C x S x S images in [-1, 1] (C in {1, 3}, S in
// {28, 32, 64, 128}) of K classes (2 to 1000): its JudgeShape.
//
// Architecture: stride-2 stages of Conv 5x5 (padding 2) . LeakyReLU(0.2), until the map
// is 8 x 8 or smaller, then the 64 features and the logits:
//   S = 28:  C->16 (14x14), 16->32 (7x7)                      Flatten 1568
//   S = 32:  C->16 (16x16), 16->32 (8x8)                      Flatten 2048
//   S = 64:  C->16 (32x32), 16->32 (16x16), 32->64 (8x8)       Flatten 4096
//   S = 128: C->16 (64x64), 16->32 (32x32), 32->64 (16x16), 64->64 (8x8)  Flatten 4096
//   then Dense Flatten->64 . LeakyReLU (the 64 features the Fréchet distance compares) .
//   Dense 64->K (class logits).
// A bigger image gets more stages rather than a wider flatten, so the dense layer stays
// at most 4096 x 64 and a 128-pixel image costs about 40 million multiply-adds. The
// 1x28x28, 10-class judge (MNIST, Fashion-MNIST) is exactly the network judges were
// before shapes existed, parameter for parameter, and its file is the same bytes
// (judge_store.h). Trained with Adam and softmax cross-entropy from a fixed seed, on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/data/mnist_dataset.h"
#include "worker/eval/quality_score.h"
#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"
#include "worker/optim/optimizer.h"

namespace gantry {

inline constexpr int64_t kJudgeFeatures = 64;
inline constexpr int64_t kJudgeClasses = 10;  // MNIST's and Fashion-MNIST's
inline constexpr int64_t kJudgeSide = 28;
inline constexpr int64_t kJudgeMaxClasses = 1000;

// The images a judge takes and the classes it tells apart.
struct JudgeShape {
  int64_t channels = 1;
  int64_t side = kJudgeSide;
  int64_t classes = kJudgeClasses;
  bool operator==(const JudgeShape&) const = default;
};

// "3x64x64 images, 12 classes", for messages.
std::string JudgeShapeName(const JudgeShape& shape);

// OK for channels 1 or 3, side 28, 32, 64 or 128 and 2 to 1000 classes; else
// INVALID_ARGUMENT naming the value and what the judge takes.
absl::Status CheckJudgeShape(const JudgeShape& shape);

struct JudgeOptions {
  int64_t epochs = 2;
  int64_t batch_size = 64;
  float lr = 1e-3f;
  uint64_t seed = 1;
  // Below this test accuracy the judge is not worth caching (train-judge refuses).
  double min_accuracy = 0.85;
  // The number of classes the labels name (0 .. classes - 1); the images give the rest
  // of the judge's shape.
  int64_t classes = kJudgeClasses;
};

class Judge {
 public:
  // An untrained network (zero weights) of `shape`, which CheckJudgeShape must accept
  // (CHECK-fails otherwise). The default is the MNIST judge's: 1x28x28, 10 classes.
  explicit Judge(const JudgeShape& shape = JudgeShape{});

  void Initialize(uint64_t seed);
  const FlatParameters& params() const { return *params_; }
  const JudgeShape& shape() const { return shape_; }
  int64_t image_numel() const { return shape_.channels * shape_.side * shape_.side; }

  // Features [n, 64] and logits [n, classes] of n images (n x C x S x S floats, NCHW), inference.
  void Evaluate(Backend& backend, const float* images, int64_t n, std::vector<float>* features,
                std::vector<float>* logits) const;
  // One optimizer step on a batch of n images with their labels (each < classes); the
  // batch's mean loss.
  double TrainStep(Backend& backend, Optimizer& optimizer, const float* images, const std::vector<int32_t>& labels);

  // What train-judge measured, saved with the weights.
  std::string dataset;           // "mnist" | "fashion-mnist" | the name of an image set
  double test_accuracy = 0;
  FeatureStats test_features;    // of the test images

 private:
  // n images as an [n, C, S, S] tensor.
  Tensor Batch(const float* images, int64_t n) const;

  JudgeShape shape_;
  Sequential features_;
  Sequential head_;
  std::unique_ptr<FlatParameters> params_;
};

// Trains a judge on `train` and measures it on `test` (accuracy and feature statistics);
// logs a line per epoch. The judge's shape is the images' (channels, side) and
// options.classes. INVALID_ARGUMENT naming the images file for images the judge cannot
// take (not square, or a shape CheckJudgeShape refuses), for train and test images of
// different shapes, for a label >= options.classes, or for no images.
absl::StatusOr<std::unique_ptr<Judge>> TrainJudge(Backend& backend, const ImageDataset& train,
                                                  const ImageDataset& test, const std::string& dataset,
                                                  const JudgeOptions& options);

// The fraction of `data` the judge classifies right.
double JudgeAccuracy(Backend& backend, const Judge& judge, const ImageDataset& data);

// One epoch's quality: scores of n generated images (n x C x S x S floats in [-1, 1]).
struct QualityScores {
  double frechet = 0;
  ClassScores classes;
};
QualityScores ScoreImages(Backend& backend, const Judge& judge, const float* images, int64_t n);

}  // namespace gantry
