// Structured synthetic images for the quality tests (tests/eval): a labelled image set
// with class-like variety, and the ways of spoiling it that a quality score must notice.
//
// Kind k of `kinds` (the label) is a shape (disc, square, triangle, ring, cross, diamond:
// k mod 6) filled with a colour of its own (hue from k) and striped with a texture of its
// own frequency and angle, on a two-colour gradient background whose hue and direction
// also come from k. Each image jitters the shape's position, size and colour, the
// gradient's direction and the texture's phase, and adds faint pixel noise, so a kind is
// a distribution, not one picture. Edges are antialiased over one pixel. Pixels are in
// [-1, 1], NCHW; grey images (1 channel) hold the colours' luminance.
#pragma once

#include <cstdint>

#include "worker/data/mnist_dataset.h"

namespace gantry::testing {

struct SyntheticImageSpec {
  int64_t channels = 3;
  int64_t side = 64;
  int64_t kinds = 8;        // classes of the set (labels 0 .. kinds - 1)
  int64_t kinds_drawn = 0;  // draw only kinds 0 .. kinds_drawn - 1 (mode dropping); 0: all
};

// `count` images of `spec`, their kinds drawn uniformly; the same seed gives the same set.
ImageDataset SyntheticImages(int64_t count, const SyntheticImageSpec& spec, uint64_t seed);

// Pixels uniform in [-1, 1]: the worst a generator can do.
ImageDataset UniformNoiseImages(int64_t count, int64_t channels, int64_t side, uint64_t seed);

// Spoilers, in place; each result is clamped to [-1, 1].
// Gaussian blur of standard deviation `sigma` pixels (separable, edges clamped).
void BlurImages(ImageDataset& images, double sigma);
// Independent Gaussian noise of standard deviation `stddev` on every pixel.
void AddPixelNoise(ImageDataset& images, double stddev, uint64_t seed);
// A colour cast: `amount` added to red and taken from blue (grey images: added).
void ShiftColours(ImageDataset& images, double amount);

}  // namespace gantry::testing
