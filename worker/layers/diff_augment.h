// Differentiable augmentation of a discriminator's image inputs, after DiffAugment
// ("Differentiable Augmentation for Data-Efficient GAN Training", Zhao et al. 2020):
// [N, C, H, W] -> [N, C, H, W], random per image, and differentiable in the image, so a
// GAN step can show D T(real) and T(G(z)) and still give G the gradient of D(T(G(z))).
//
// The transforms, each optional, always in this order (the authors' recommended policy
// string, "color,translation,cutout"), per image n with its own draws:
//   color        brightness   x += b,                          b in [-0.5, 0.5)
//                saturation   x = (x - m_p) * s + m_p,         s in [0, 2); m_p the mean of pixel p
//                                                              over the channels
//                contrast     x = (x - m) * k + m,             k in [0.5, 1.5); m the mean of the
//                                                              whole image (all channels)
//   translation  y[c, i, j] = x[c, i + ty, j + tx], 0 where that lies outside the image;
//                ty, tx integers in [-H/8, H/8] and [-W/8, W/8] (integer division)
//   cutout       y = 0 inside a rectangle of H/2 x W/2 (integer division) whose centre is
//                drawn as the authors draw it: its first row is o - (H/2)/2 with o an
//                integer in [0, H] for an even H/2 ([0, H - 1] for an odd one), so it may
//                stick out of the image (only its part inside is zeroed); columns alike
// The backward pass is the adjoint, and needs only the draws (every transform is affine
// in the image): cutout masks the gradient; translation shifts it back by (-ty, -tx),
// zero where the forward read padding; color applies the chain rule through contrast,
// saturation and brightness, means included (g = k g + (1 - k) mean(g); then
// g = s g + (1 - s) mean over channels of g; brightness passes g unchanged).
//
// Where this differs from the authors' PyTorch code (mit-han-lab/data-efficient-gans,
// DiffAugment_pytorch.py), and why:
//   - The order is fixed. Theirs follows the policy string; one order makes two
//     spellings of a policy one run (and one checkpoint-compatible setting).
//   - The draws are a pure function of (seed, the image's row in the GLOBAL batch)
//     (DrawAugment), not of a stateful generator, so a batch split over any number of
//     ranks is augmented exactly as on one rank, and a resumed run draws what the
//     uninterrupted one drew. The integers come from a 24-bit uniform (bias < 1e-6).
//   - The shift and cutout sizes divide the side by 8 and 2 rounding down, as the
//     file's first release does (`x.size(2) // 8`); later versions round to nearest
//     (int(H * 0.125 + 0.5)). Identical for sides divisible by 16 (32-128 px); a 28 px
//     image shifts by up to 3 here, up to 4 there.
//
// Precision: D's input is fp32 in every run (bf16 runs round only the operands of the
// matrix products, inside those layers: saved_input.h), so the op takes and returns fp32.
// Devices: host memory only. The op has no Backend kernels, so a CUDA run cannot use it;
// --augment is refused with --device cuda when the settings are resolved
// (runspec/train_config.cc).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "worker/layers/layer.h"

namespace gantry {

// Which transforms run (runspec/augment_policy.h is the setting; worker/models maps it).
struct AugmentTransforms {
  bool color = false;
  bool translation = false;
  bool cutout = false;
  bool any() const { return color || translation || cutout; }
};

// One image's transform parameters.
struct AugmentDraw {
  float brightness = 0;    // added to every value
  float saturation = 1;    // factor of each value's distance from its pixel's channel mean
  float contrast = 1;      // factor of each value's distance from the image's mean
  int64_t shift_y = 0;     // output row i reads input row i + shift_y
  int64_t shift_x = 0;     // output column j reads input column j + shift_x
  int64_t cut_top = 0;     // the cutout rectangle's first row and column; may be negative
  int64_t cut_left = 0;
};

// The sizes the draws depend on, for images of `height` x `width`.
struct AugmentGeometry {
  int64_t max_shift_y = 0;  // height / 8
  int64_t max_shift_x = 0;  // width / 8
  int64_t cut_height = 0;   // height / 2
  int64_t cut_width = 0;    // width / 2
  static AugmentGeometry For(int64_t height, int64_t width);
};

// The draws for row `row` of a global batch of height x width images: a pure function of
// its arguments. Every field is drawn whatever the transforms, each from its own slot of
// the row's counter range, so switching one transform on leaves the others' draws alone.
AugmentDraw DrawAugment(uint64_t seed, int64_t row, int64_t height, int64_t width);

// y = T(x) for `x` [N, C, H, W] (fp32, host) and one draw per image. For tests against a
// reference with given parameters; the layer below draws them itself.
Tensor AugmentForward(const AugmentTransforms& transforms, std::span<const AugmentDraw> draws, const Tensor& x);
// dL/dx given dL/dy, the adjoint of AugmentForward with the same transforms and draws.
Tensor AugmentBackward(const AugmentTransforms& transforms, std::span<const AugmentDraw> draws, const Tensor& dy);

// The op as a parameter-free layer. In training, row i of the input is transformed with
// DrawAugment(ctx.dropout_seed, ctx.row_offset + i, H, W); the cache keeps the draws.
// With no transform, or in eval mode, it is the identity (and returns views of its
// arguments, so a step without augmentation computes exactly what it did without the op).
class DiffAugment : public Layer {
 public:
  explicit DiffAugment(AugmentTransforms transforms) : transforms_(transforms) {}

  std::string name() const override { return "diff_augment"; }
  Shape OutputShape(const Shape& input) const override { return input; }
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

  const AugmentTransforms& transforms() const { return transforms_; }

 private:
  AugmentTransforms transforms_;
};

}  // namespace gantry
