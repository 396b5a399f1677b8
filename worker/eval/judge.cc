#include "worker/eval/judge.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "spdlog/spdlog.h"
#include "worker/layers/activation.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/linear.h"
#include "worker/layers/losses.h"
#include "worker/layers/reshape.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr float kSlope = 0.2f;
constexpr int64_t kEvalBatch = 256;
// Channels of the stride-2 stages, in order; a judge uses as many as its side needs.
constexpr int64_t kJudgeStageChannels[] = {16, 32, 64, 64};

std::vector<Layer*> AllLayers(const Sequential& a, const Sequential& b) {
  std::vector<Layer*> layers = a.layers();
  for (Layer* l : b.layers()) layers.push_back(l);
  return layers;
}

// Stride-2 stages until the map is at most 8 pixels a side: 2 for 28 and 32, 3 for 64,
// 4 for 128.
int64_t JudgeStages(int64_t side) {
  int64_t stages = 0;
  for (int64_t s = side; s > 8; s = (s + 1) / 2) ++stages;
  return stages;
}

bool IsJudgeSide(int64_t side) { return side == 28 || side == 32 || side == 64 || side == 128; }

absl::Status CheckJudgeable(const ImageDataset& d, const JudgeShape& shape) {
  if (d.height != d.width) {
    return absl::InvalidArgumentError(absl::StrCat(d.images_path, ": the judge takes square images, these are ",
                                                   d.channels, "x", d.height, "x", d.width));
  }
  if (d.channels != shape.channels || d.height != shape.side) {
    return absl::InvalidArgumentError(absl::StrCat(d.images_path, ": images of ", d.channels, "x", d.height, "x",
                                                   d.width, ", the judge being trained takes ",
                                                   JudgeShapeName(shape)));
  }
  for (uint8_t label : d.labels) {
    if (label >= shape.classes) {
      return absl::InvalidArgumentError(absl::StrCat(d.images_path, ": label ", int{label}, " is not one of the ",
                                                     shape.classes, " classes 0-", shape.classes - 1));
    }
  }
  if (d.count == 0) return absl::InvalidArgumentError(absl::StrCat(d.images_path, ": no images"));
  return absl::OkStatus();
}

}  // namespace

std::string JudgeShapeName(const JudgeShape& shape) {
  return absl::StrCat(shape.channels, "x", shape.side, "x", shape.side, " images, ", shape.classes, " classes");
}

absl::Status CheckJudgeShape(const JudgeShape& shape) {
  if (shape.channels != 1 && shape.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("the judge takes 1 or 3 channels (grey or RGB), not ", shape.channels));
  }
  if (!IsJudgeSide(shape.side)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the judge takes images of 28, 32, 64 or 128 pixels a side, not ", shape.side));
  }
  if (shape.classes < 2 || shape.classes > kJudgeMaxClasses) {
    return absl::InvalidArgumentError(absl::StrCat("the judge tells 2 to ", kJudgeMaxClasses,
                                                   " classes apart, not ", shape.classes));
  }
  return absl::OkStatus();
}

Judge::Judge(const JudgeShape& shape) : shape_(shape) {
  const absl::Status valid = CheckJudgeShape(shape);
  CHECK(valid.ok()) << valid.message();
  int64_t in = shape.channels, side = shape.side;
  for (int64_t stage = 0; stage < JudgeStages(shape.side); ++stage) {
    const int64_t out = kJudgeStageChannels[stage];
    features_.Add(std::make_unique<Conv2d>(in, out, 5, 2, 2, /*bias=*/true)).Add(MakeLeakyRelu(kSlope));
    in = out;
    side = (side + 1) / 2;
  }
  features_.Add(std::make_unique<Flatten>());
  features_.Add(std::make_unique<Linear>(in * side * side, kJudgeFeatures, /*bias=*/true)).Add(MakeLeakyRelu(kSlope));
  head_.Add(std::make_unique<Linear>(kJudgeFeatures, shape.classes, /*bias=*/true));
  const std::vector<Layer*> layers = AllLayers(features_, head_);
  params_ = std::make_unique<FlatParameters>(layers);
}

void Judge::Initialize(uint64_t seed) {
  Rng rng(Mix64(seed ^ 0x6a75646765ull));  // "judge"
  params_->Initialize(InitScheme::kGlorotUniform, rng);
}

void Judge::Evaluate(Backend& backend, const float* images, int64_t n, std::vector<float>* features,
                     std::vector<float>* logits) const {
  Context ctx;
  ctx.backend = &backend;
  ctx.training = false;
  ctx.param_grads = false;
  if (features) features->clear();
  if (logits) logits->clear();
  for (int64_t begin = 0; begin < n; begin += kEvalBatch) {
    const int64_t m = std::min(kEvalBatch, n - begin);
    SequentialCache fc, hc;
    const Tensor f = features_.Forward(ctx, Batch(images + begin * image_numel(), m), &fc);
    if (features) features->insert(features->end(), f.data(), f.data() + f.numel());
    if (logits) {
      const Tensor y = head_.Forward(ctx, f, &hc);
      logits->insert(logits->end(), y.data(), y.data() + y.numel());
    }
  }
}

Tensor Judge::Batch(const float* images, int64_t n) const {
  return Tensor::FromVector(Shape{n, shape_.channels, shape_.side, shape_.side},
                            std::vector<float>(images, images + n * image_numel()));
}

double Judge::TrainStep(Backend& backend, Optimizer& optimizer, const float* images,
                        const std::vector<int32_t>& labels) {
  Context ctx;
  ctx.backend = &backend;
  params_->ZeroGrads();
  SequentialCache fc, hc;
  const Tensor f = features_.Forward(ctx, Batch(images, static_cast<int64_t>(labels.size())), &fc);
  const Tensor y = head_.Forward(ctx, f, &hc);
  const LossResult loss = SoftmaxCrossEntropyLoss(y, labels);
  const Tensor df = head_.Backward(ctx, loss.grad, hc, /*want_input_grad=*/true);
  features_.Backward(ctx, df, fc, /*want_input_grad=*/false);
  optimizer.Step(backend, params_->params(), params_->grads());
  return loss.loss;
}

double JudgeAccuracy(Backend& backend, const Judge& judge, const ImageDataset& data) {
  std::vector<float> logits;
  judge.Evaluate(backend, data.pixels.data(), data.count, nullptr, &logits);
  const int64_t k = judge.shape().classes;
  int64_t right = 0;
  for (int64_t i = 0; i < data.count; ++i) {
    const float* row = logits.data() + i * k;
    right += std::max_element(row, row + k) - row == data.labels[i];
  }
  return data.count ? static_cast<double>(right) / static_cast<double>(data.count) : 0.0;
}

absl::StatusOr<std::unique_ptr<Judge>> TrainJudge(Backend& backend, const ImageDataset& train,
                                                  const ImageDataset& test, const std::string& dataset,
                                                  const JudgeOptions& options) {
  const JudgeShape shape{.channels = train.channels, .side = train.height, .classes = options.classes};
  if (absl::Status s = CheckJudgeShape(shape); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(train.images_path, ": ", s.message()));
  }
  if (absl::Status s = CheckJudgeable(train, shape); !s.ok()) return s;
  if (absl::Status s = CheckJudgeable(test, shape); !s.ok()) return s;
  auto judge = std::make_unique<Judge>(shape);
  judge->dataset = dataset;
  judge->Initialize(options.seed);
  OptimizerConfig adam;
  adam.lr = options.lr;
  adam.beta1 = 0.9f;
  absl::StatusOr<std::unique_ptr<Optimizer>> optimizer =
      MakeOptimizer(adam, judge->params().num_params(), Device::kCpu);
  if (!optimizer.ok()) return optimizer.status();
  Rng shuffle(Mix64(options.seed ^ 0x73687566ull));  // "shuf"
  std::vector<int64_t> order(static_cast<size_t>(train.count));
  std::vector<float> images;
  std::vector<int32_t> labels;
  const int64_t pixels = judge->image_numel();
  const int64_t batch = std::max<int64_t>(1, std::min(options.batch_size, train.count));
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), int64_t{0});
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.Below(i)]);
    double loss = 0;
    int64_t steps = 0;
    for (int64_t begin = 0; begin + batch <= train.count; begin += batch) {
      images.clear();
      labels.clear();
      for (int64_t k = begin; k < begin + batch; ++k) {
        const float* image = train.pixels.data() + order[k] * pixels;
        images.insert(images.end(), image, image + pixels);
        labels.push_back(train.labels[order[k]]);
      }
      loss += judge->TrainStep(backend, **optimizer, images.data(), labels);
      ++steps;
    }
    spdlog::info("judge epoch {}/{}: mean loss {:.4f} over {} steps", epoch, options.epochs,
                 steps ? loss / static_cast<double>(steps) : 0.0, steps);
  }
  judge->test_accuracy = JudgeAccuracy(backend, *judge, test);
  std::vector<float> features;
  judge->Evaluate(backend, test.pixels.data(), test.count, &features, nullptr);
  judge->test_features = ComputeFeatureStats(features.data(), test.count, kJudgeFeatures);
  return judge;
}

QualityScores ScoreImages(Backend& backend, const Judge& judge, const float* images, int64_t n) {
  std::vector<float> features, logits;
  judge.Evaluate(backend, images, n, &features, &logits);
  QualityScores q;
  q.frechet = FrechetDistance(ComputeFeatureStats(features.data(), n, kJudgeFeatures), judge.test_features);
  SoftmaxRows(logits, n, judge.shape().classes);
  q.classes = ScoreClasses(logits, n, judge.shape().classes);
  return q;
}

}  // namespace gantry
