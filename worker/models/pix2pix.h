// Pix2Pix (Isola et al., CVPR 2017) as in the TensorFlow tutorial at 256 px, for the
// flow workload: G maps a condition image (flow frame t + obstacle mask, 4 channels) to
// the frame --horizon steps later (3 channels); D judges (condition, image) pairs.
//
//   G (UNet, worker/models/unet.h), depth n = min(log2 S, 8), c_i = ngf * min(2^i, 8):
//     down i = 0..n-1:  Conv 4x4 s2 p1 (no bias) -> norm (not for i = 0, n-1) -> LeakyReLU
//     up j = 0..n-2:    ConvT 4x4 s2 p1 (no bias) -> norm -> ReLU -> Dropout(0.5) for j < 3,
//                       then concat [up output, down_{n-2-j} output] on channels
//     out:              ConvT 4x4 s2 p1 (bias) -> tanh, 3 channels
//   D (70x70 PatchGAN): concat(condition, image) [N,7,S,S] ->
//     Conv(ndf) s2 (no norm) -> LReLU -> Conv(2ndf) s2 -> norm -> LReLU -> Conv(4ndf) s2
//     -> norm -> LReLU -> Conv(8ndf) 4x4 s1 p1 -> norm -> LReLU -> Conv(1) 4x4 s1 p1 (bias)
//     = [N,1,S/8-2,S/8-2] logits (30x30 at 256 px). Convolutions before a norm have no
//     bias (the tutorial's use_bias=False); the last ones of G and D have one.
//   Losses (one shared forward, both gradients, as the tutorial's train_step):
//     d_loss = 0.5 * (BCE(D(x, y), 1) + BCE(D(x, G(x)), 0))
//     g_loss = BCE(D(x, G(x)), 1) + l1_weight * mean|G(x) - y|
//   Adam 2e-4, beta1 0.5 and N(0, 0.02) weights are the pix2pix defaults of the run
//   settings (runspec/train_config.cc).
//
// Where the sources disagree (the TF tutorial, junyanz's PyTorch code; docs/pix2pix.md), we chose:
//   - Block order: the TF tutorial's Conv-Norm-LeakyReLU (down) and ConvT-Norm-Dropout-ReLU
//     (up), not junyanz's LeakyReLU-Conv-Norm pre-activation: the issue asks for the
//     tutorial network, the study's slide lists "C, LR, N"-style conv-first blocks, and
//     skips then carry activated features as in the tutorial.
//   - Bottleneck: NO norm in the innermost down block (junyanz; the tutorial keeps BN). A
//     BatchNorm over a 1x1 map normalises each channel over the batch only: at a per-rank
//     batch of 1 (common for pix2pix, and what a data-parallel split can leave a rank) it
//     outputs beta whatever the input, cutting the bottleneck out of the network, and
//     InstanceNorm of a 1x1 plane is always 0.
//   - LeakyReLU slope 0.2 (the paper and junyanz); the tutorial's 0.3 is the Keras
//     default of a LeakyReLU() called without one, not a stated choice.
//   - D loss halved (the paper: "we divide the objective by 2 while optimizing D";
//     junyanz's 0.5 * (fake + real)); the tutorial sums. With Adam the factor barely
//     moves the update, but halved d_loss reads like g's GAN term: log 2 = 0.69 each at
//     D's chance level.
//   - G's first and D's first blocks have no norm; dropout in the first three up blocks.
// Unrolled training (--unroll M, Pix2pixConfig::unroll): rows are windows {4 + 3 M, S, S}
// (worker/data/flow_pairs.h), the condition x_0 then the true frames y_1..y_M. G runs M
// times, each on its own last prediction with the window's mask: x_k = [G(x_{k-1}), mask].
// Step k carries the pix2pix losses above on the fake pair (x_{k-1}, G(x_{k-1})) against
// the real pair (true condition k-1, y_k); the networks' losses are the mean over the
// steps that carry one (every step, or only the last: --unroll-loss), and the gradients
// flow back through every prediction into the earlier steps (through G's input and through
// D's judgement of the condition), unless --pushforward, where only the last step is in the
// graph. Dropout draws a fresh mask per step; BatchNorm sees each step's batch (its
// running statistics move once per G pass). M = 1 is the one-step path above, bit for bit.
//
// Samples: the grid written after each epoch must show the model on fixed validation
// pairs, so SamplesFromData() is true and SampleInputsFromRows splits such rows; drawing
// inputs from an Rng would be meaningless for a conditional GAN (SampleInputs CHECK-fails).
#pragma once

#include <memory>

#include "runspec/model_config.h"
#include "worker/layers/sequential.h"
#include "worker/models/gan_model.h"
#include "worker/models/unet.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

inline constexpr int64_t kPix2pixRowChannels = Pix2pixConfig::kInputChannels + Pix2pixConfig::kOutputChannels;

// G: a Sequential holding the one UNet layer (--predict frame), or the UNet inside a
// ResidualNextFrame (--predict delta: the UNet's output is added to the input frame). D: the PatchGAN on 7-channel pairs.
Sequential MakePix2pixGenerator(const Pix2pixConfig& config);
Sequential MakePix2pixDiscriminator(const Pix2pixConfig& config);

// Side of D's logit map for an image side: S/8 - 2 (30 at 256).
int64_t PatchGanLogitSide(int64_t image_size);

class Pix2pix final : public GanModel {
 public:
  // config.image_size must be valid (the settings check it; CHECKed here).
  explicit Pix2pix(const Pix2pixConfig& config, Device device = Device::kCpu);
  Pix2pix(const Pix2pix&) = delete;
  Pix2pix& operator=(const Pix2pix&) = delete;

  const Pix2pixConfig& config() const { return config_; }
  std::string name() const override { return "pix2pix"; }
  Sequential& generator() override { return generator_; }
  Sequential& discriminator() override { return discriminator_; }
  FlatParameters& g_params() override { return *g_params_; }
  FlatParameters& d_params() override { return *d_params_; }
  // Condition (4 channels) and target (3) stacked: {7, S, S}; with --unroll M the M
  // targets of a window: {4 + 3 M, S, S}.
  Shape SampleShape() const override;

  // generator_input = rows[:, 0:4] (the condition), real = rows[:, 4:] (the target, or the
  // window's M targets).
  // Nothing is random, so `rng` is left alone.
  GanInputs StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                       Device device) const override;
  // The pix2pix losses of the top comment, with GanLossWeights' semantics: D's gradient is
  // of weights.d * d_loss, G's of weights.g * g_loss (both terms).
  GanStepResult ComputeGradients(const Context& ctx, const GanInputs& inputs, const GanLossWeights& weights) override;
  // Sets the steps the epoch unrolls (the curriculum's, config().unroll.StepsAt(epoch)).
  void BeginEpoch(int64_t epoch) override { unrolled_ = config_.unroll.StepsAt(epoch); }
  int64_t unrolled_steps() const { return unrolled_; }

  bool SamplesFromData() const override { return true; }
  Tensor SampleInputs(Rng& rng, int64_t count) const override;
  Tensor SampleInputsFromRows(const Tensor& rows) const override;
  // bench/torch/pix2pix_model.py's UNet (either --predict) and PatchGAN.
  TorchNames TorchStateDictNames(GanNetwork network) const override;

  UNet& unet() { return *unet_; }

 private:
  // Copies channels [first, first + count) of every row (on any device). Rows may hold
  // any channel count that has them (a pair or a window).
  Tensor Channels(const Tensor& rows, int64_t first, int64_t count, Device device) const;
  // The one-step losses on condition x and target y.
  GanStepResult OneStep(const Context& ctx, const Tensor& x, const Tensor& y, const GanLossWeights& weights,
                        const GanGradientHooks& hooks);
  // The unrolled losses over `steps` >= 2 steps of `targets` ([b, 3 M, S, S]).
  GanStepResult Unrolled(const Context& ctx, const Tensor& x, const Tensor& targets, int64_t steps,
                         const GanLossWeights& weights, const GanGradientHooks& hooks);

  Pix2pixConfig config_;
  Sequential generator_;
  Sequential discriminator_;
  UNet* unet_;  // the generator's one layer
  int64_t unrolled_;  // steps this epoch unrolls, in [1, config_.unroll.steps]
  std::unique_ptr<FlatParameters> g_params_;
  std::unique_ptr<FlatParameters> d_params_;
};

}  // namespace gantry
