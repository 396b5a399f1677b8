#include "worker/eval/random_feature_scorer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr std::array<int64_t, 5> kStageChannels = {32, 64, 128, 128, 128};
constexpr uint64_t kRandomFeatureStream = 0x7266656174ull;  // "rfeat"
// Images per forward pass: a 128-image batch's widest map is 128 x 32 x 32 x 32 floats (16 MiB).
constexpr int64_t kFeatureBatch = 128;

constexpr int64_t StageFeatureSum() {
  int64_t sum = 0;
  for (int64_t c : kStageChannels) sum += c;
  return sum;
}
static_assert(StageFeatureSum() == kRandomFeatureDim, "the features are the stages' channels");

bool IsScorableSide(int64_t side) { return side == 28 || side == 32 || side == 64 || side == 128; }

// The spatial mean of each channel of y [m, c, h, w], into columns [offset, offset + c)
// of m feature rows of `dim`.
void AddChannelMeans(const Tensor& y, float* rows, int64_t dim, int64_t offset) {
  const int64_t m = y.dim(0), c = y.dim(1), area = y.dim(2) * y.dim(3);
  const float* p = y.data();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      const float* map = p + (i * c + k) * area;
      double sum = 0;
      for (int64_t j = 0; j < area; ++j) sum += map[j];
      rows[i * dim + offset + k] = static_cast<float>(sum / static_cast<double>(area));
    }
  }
}

// The first stage's odd output channels see structure only: each of their 3x3 kernels
// (per input channel) is shifted to zero mean, so a flat patch of any colour gives 0 (away
// from the zero-padded border), and scaled by sqrt(9/8) to keep the He variance. Their
// features then measure edges, texture and noise without the colour that dominates every
// plain filter's response, which is what makes a 1-pixel blur visible
// (random_feature_scorer.h).
void MakeStructureOnly(const FlatParameters::Entry& first_stage, float* params) {
  const int64_t outs = first_stage.spec.shape[0], ins = first_stage.spec.shape[1];
  const int64_t taps = first_stage.spec.shape[2] * first_stage.spec.shape[3];
  const double keep_variance = std::sqrt(static_cast<double>(taps) / static_cast<double>(taps - 1));
  for (int64_t o = 1; o < outs; o += 2) {
    for (int64_t c = 0; c < ins; ++c) {
      float* w = params + first_stage.offset + (o * ins + c) * taps;
      double mean = 0;
      for (int64_t k = 0; k < taps; ++k) mean += w[k];
      mean /= static_cast<double>(taps);
      for (int64_t k = 0; k < taps; ++k) w[k] = static_cast<float>((w[k] - mean) * keep_variance);
    }
  }
}

}  // namespace

absl::StatusOr<RandomFeatureScorer> RandomFeatureScorer::Create(int64_t channels, int64_t image_size,
                                                                uint64_t seed) {
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("the random-feature score takes 1 or 3 channels (grey or RGB), not ", channels));
  }
  if (!IsScorableSide(image_size)) {
    return absl::InvalidArgumentError(absl::StrCat("the random-feature score takes images of 28, 32, 64 or 128 "
                                                   "pixels a side, not ",
                                                   image_size));
  }
  return RandomFeatureScorer(channels, image_size, seed);
}

RandomFeatureScorer::RandomFeatureScorer(int64_t channels, int64_t image_size, uint64_t seed)
    : channels_(channels), image_size_(image_size) {
  int64_t in = channels;
  std::vector<Layer*> layers;
  for (int64_t out : kStageChannels) {
    stages_.push_back(std::make_unique<Conv2d>(in, out, /*kernel=*/3, /*stride=*/2, /*padding=*/1, /*bias=*/false,
                                               FusedActivation{Activation::kRelu, 0.0f}));
    layers.push_back(stages_.back().get());
    in = out;
  }
  params_ = std::make_unique<FlatParameters>(layers);
  // He-normal: N(0, 2 / fan_in), every weight in stage order.
  Rng rng(Mix64(seed ^ kRandomFeatureStream));
  float* p = params_->params().data();
  for (const FlatParameters::Entry& e : params_->param_entries()) {
    const double scale = std::sqrt(2.0 / static_cast<double>(e.spec.fan_in));
    for (int64_t i = 0; i < e.spec.shape.numel(); ++i) p[e.offset + i] = static_cast<float>(scale * rng.Normal());
  }
  MakeStructureOnly(params_->param_entries()[0], p);
  // Area resampling: output pixel o covers [o S, (o + 1) S) and input pixel i covers
  // [i W, (i + 1) W) in units of 1/W input pixels; the weight is the overlap over S
  // (exact in these units, so a 2:1 or 1:2 ratio gives exact halves and ones).
  const int64_t s = image_size, w = kRandomFeatureSide;
  taps_.resize(static_cast<size_t>(w));
  for (int64_t o = 0; o < w; ++o) {
    for (int64_t i = (o * s) / w; i < s && i * w < (o + 1) * s; ++i) {
      const int64_t overlap = std::min((o + 1) * s, (i + 1) * w) - std::max(o * s, i * w);
      if (overlap > 0) taps_[o].push_back({i, static_cast<float>(static_cast<double>(overlap) / static_cast<double>(s))});
    }
  }
}

Tensor RandomFeatureScorer::Resampled(const float* images, int64_t m) const {
  const int64_t s = image_size_, w = kRandomFeatureSide;
  Tensor out = Tensor::Uninitialized(Shape{m, channels_, w, w});
  std::vector<float> rows(static_cast<size_t>(w * s));  // one plane resampled along y only
  for (int64_t plane = 0; plane < m * channels_; ++plane) {
    const float* in = images + plane * s * s;
    for (int64_t oy = 0; oy < w; ++oy) {
      for (int64_t x = 0; x < s; ++x) {
        float v = 0;
        for (const Tap& t : taps_[oy]) v += t.weight * in[t.input * s + x];
        rows[oy * s + x] = v;
      }
    }
    float* dst = out.data() + plane * w * w;
    for (int64_t oy = 0; oy < w; ++oy) {
      for (int64_t ox = 0; ox < w; ++ox) {
        float v = 0;
        for (const Tap& t : taps_[ox]) v += t.weight * rows[oy * s + t.input];
        dst[oy * w + ox] = v;
      }
    }
  }
  return out;
}

std::vector<float> RandomFeatureScorer::Features(Backend& backend, const float* images, int64_t n) const {
  CHECK(backend.device() == Device::kCpu) << "the random-feature network's weights are host memory: score with a "
                                             "host backend, not "
                                          << backend.name();
  Context ctx;
  ctx.backend = &backend;
  ctx.training = false;
  ctx.param_grads = false;
  const int64_t pixels = channels_ * image_size_ * image_size_;
  std::vector<float> features(static_cast<size_t>(n * kRandomFeatureDim));
  for (int64_t begin = 0; begin < n; begin += kFeatureBatch) {
    const int64_t m = std::min(kFeatureBatch, n - begin);
    Tensor x = Resampled(images + begin * pixels, m);
    int64_t offset = 0;
    for (const std::unique_ptr<Conv2d>& stage : stages_) {
      ActivationCache cache;
      x = stage->Forward(ctx, x, &cache);
      AddChannelMeans(x, features.data() + begin * kRandomFeatureDim, kRandomFeatureDim, offset);
      offset += x.dim(1);
    }
  }
  return features;
}

absl::StatusOr<ReferenceFeatures> RandomFeatureScorer::Reference(Backend& backend, const float* images,
                                                                 int64_t n) const {
  return MakeReferenceFeatures(Features(backend, images, n), kRandomFeatureDim);
}

absl::StatusOr<ImageQuality> RandomFeatureScorer::Score(Backend& backend, const float* images, int64_t n,
                                                        const ReferenceFeatures& reference,
                                                        const KidOptions& kid) const {
  return ScoreImageQuality(Features(backend, images, n), reference, kid);
}

}  // namespace gantry
