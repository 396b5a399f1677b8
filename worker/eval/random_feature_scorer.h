// Label-free features of images for the quality score (image_quality.h): the outputs of a
// FIXED convolutional network with random weights drawn from a seed, so no weights are
// downloaded or trained and every run with the same seed embeds images identically.
//
// Why random features. A trained classifier (judge.h) needs labels; Inception (FID,
// KID's original embedding) is an ImageNet classifier that cannot be shipped here and
// whose class information biases the score (Kynkäänniemi, Karras, Aittala, Aila,
// Lehtinen 2023, "The Role of ImageNet Classes in Fréchet Inception Distance", ICLR).
// Randomly initialised convolutional networks are a published alternative: Naeem, Oh,
// Uh, Choi, Yoo 2020 ("Reliable Fidelity and Diversity Metrics for Generative Models",
// ICML) evaluate in the embedding of a randomly initialised VGG16 and recommend it where
// the data is far from ImageNet's statistics, since it carries no ImageNet bias; Lee,
// Kim, Lee 2022 ("Demystifying Randomly Initialized Networks for Evaluating Generative
// Models", arXiv 2208.09218) find that features of random networks evaluate generative
// models about as well as those of trained ones. That a few random convolutional layers
// at several scales capture the local statistics that tell images apart (textures, edges,
// colour) is Ustyuzhaninov, Brendel, Gatys, Bethge 2017 ("What does it take to generate
// natural textures?", ICLR). What such features cannot give is class semantics: a
// sample of the right textures and colours in a meaningless arrangement scores better
// than it looks, so the labelled judge stays the score where labels exist.
//
// The network (documented choice; changing any of it changes every score):
//   input   C x S x S in [-1, 1], C in {1, 3}, S in {28, 32, 64, 128}, resampled to
//           64 x 64 by area averaging (each output pixel the mean of the input area it
//           covers: 128 -> 64 is an exact 2x2 mean, 32 -> 64 an exact 2x2 copy, 28 a
//           fractional box), so all sizes meet the same network at the same scale and
//           cost the same;
//   stages  five of Conv 3x3, stride 2, padding 1, no bias, then ReLU, with 32, 64, 128,
//           128, 128 channels: maps of 32, 16, 8, 4, 2 pixels, receptive fields 3 to 63
//           pixels of the 64 (the last stage sees the whole image);
//   features the spatial mean of every stage's output, concatenated: 32 + 64 + 128 +
//           128 + 128 = 480 (multi-scale: the first stages see colour, edges, noise and
//           blur; the last ones shapes and layout within the image);
//   weights He-normal, N(0, 2 / fan_in) with fan_in = 9 x input channels, which keeps
//           the activations' scale through the ReLU stages; drawn in stage order from a
//           gantry Rng seeded with Mix64(seed ^ "rfeat") (the same numbers on every
//           machine); kRandomFeatureSeed unless the caller picks another. Then the
//           first stage's odd channels are made structure-only: each 3x3 kernel (per
//           input channel) shifted to zero mean and scaled by sqrt(9/8), so flat colour
//           gives them 0 and they respond to edges, texture and noise alone, while the
//           even channels see colour too. Measured on the synthetic 64-pixel set of
//           tests/eval (400 images against 400): with plain He-normal filters a 1-pixel
//           blur scored as close as a fresh sample of the reference (FD 0.156 and 0.158,
//           KID 0.00009 and 0.00010), the colour of flat regions drowning the edges in
//           every feature; with these, FD 0.130 against 0.106 (KID 0.00020 against
//           0.00001), at the price of a little of the sensitivity to mode dropping.
// 480 features: fewer than the 1,024 samples a full epoch score takes, so their
// covariance (the Fréchet distance's) has full rank, and cheap: about 13 million
// multiply-adds per image, for any input size.
//
// The weights live in host memory: Features() needs a host backend (the CPU kernels),
// as the judge does; the same inputs give the same bits on one machine.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/eval/image_quality.h"
#include "worker/layers/conv2d.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/backend.h"

namespace gantry {

inline constexpr uint64_t kRandomFeatureSeed = 1;
inline constexpr int64_t kRandomFeatureSide = 64;  // the side images are resampled to
inline constexpr int64_t kRandomFeatureDim = 480;

class RandomFeatureScorer {
 public:
  // INVALID_ARGUMENT naming the value for channels other than 1 or 3, or an image size
  // other than 28, 32, 64 or 128.
  static absl::StatusOr<RandomFeatureScorer> Create(int64_t channels, int64_t image_size,
                                                    uint64_t seed = kRandomFeatureSeed);

  RandomFeatureScorer(RandomFeatureScorer&&) = default;
  RandomFeatureScorer& operator=(RandomFeatureScorer&&) = default;

  int64_t channels() const { return channels_; }
  int64_t image_size() const { return image_size_; }
  int64_t dim() const { return kRandomFeatureDim; }

  // Features [n, 480] of n images (n x C x S x S floats, NCHW, in [-1, 1]).
  std::vector<float> Features(Backend& backend, const float* images, int64_t n) const;

  // The reference a run compares its samples with: the features of n real images (made
  // once per run). INVALID_ARGUMENT for fewer than 2.
  absl::StatusOr<ReferenceFeatures> Reference(Backend& backend, const float* images, int64_t n) const;
  // The quality of n generated images against a reference this scorer (or one of the same
  // seed: the same network) made; another network's features would compare meaninglessly.
  // INVALID_ARGUMENT for fewer than 2 images.
  absl::StatusOr<ImageQuality> Score(Backend& backend, const float* images, int64_t n,
                                     const ReferenceFeatures& reference, const KidOptions& kid = {}) const;

 private:
  RandomFeatureScorer(int64_t channels, int64_t image_size, uint64_t seed);

  // The first m of `images` resampled to [m, C, 64, 64].
  Tensor Resampled(const float* images, int64_t m) const;

  int64_t channels_;
  int64_t image_size_;
  std::vector<std::unique_ptr<Conv2d>> stages_;
  std::unique_ptr<FlatParameters> params_;
  // Area resampling S -> 64 along one axis: for each output pixel, its input pixels and
  // their weights (the fractions of the output pixel each covers).
  struct Tap {
    int64_t input;
    float weight;
  };
  std::vector<std::vector<Tap>> taps_;
};

}  // namespace gantry
