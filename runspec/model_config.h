// The settings of each model a run can train (--model), as plain values: the networks
// themselves are built from them in worker/models/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry {

// The models a run can name (--model); worker/models/model_registry.h builds each.
const std::vector<std::string>& ModelNames();

// The DCGAN of "A Novel Mixed Precision Distributed TPU GAN" (worker/models/dcgan.h).
struct DcganConfig {
  int64_t noise_dim = 100;
  float leaky_slope = 0.3f;   // Keras LeakyReLU default
  float dropout = 0.3f;
  float bn_eps = 1e-3f;       // Keras BatchNormalization defaults
  float bn_momentum = 0.99f;
  // Each LeakyReLU runs inside the layer before it (BatchNorm in G, Conv2d + bias in D),
  // as XLA fuses them: same function, same parameters and flat layout, a memory pass and
  // a tensor fewer per activation. Off: separate activation layers. Measured with
  // gantry-bench-fusion (forward + backward of those layers, thread CPU time, batch
  // 256 / 64): G's BatchNorm + LeakyReLU 8.4 -> 6.7 / 1.9 -> 1.6 ms (12544 features),
  // 3.9 -> 3.3 / 0.88 -> 0.75 (128x7x7), 9.8 -> 7.8 / 1.76 -> 1.52 (64x14x14); D's bias +
  // LeakyReLU 8.2 -> 5.7 / 1.33 -> 1.11 (64x14x14), 2.8 -> 2.5 / 0.61 -> 0.55 (128x7x7):
  // 10-30% of those layers, about 1.5% of a oneDNN training step.
  bool fuse_activations = true;
  bool operator==(const DcganConfig&) const = default;
};

// The DCGAN of Radford et al. (2016) as PyTorch's examples/dcgan builds it, for the
// square images of a packed image set (--dataset images; worker/models/image_dcgan.h):
// G from noise through transposed 4x4 convolutions (BatchNorm + ReLU, Tanh out), D
// mirrored (LeakyReLU 0.2, BatchNorm from its second block), depth from the image size.
// BatchNorm keeps PyTorch's defaults here (eps 1e-5, momentum 0.1 = Keras 0.9), as the
// network is that one's twin (bench/torch/image_dcgan_model.py).
struct ImageDcganConfig {
  int64_t image_size = 64;   // 32, 64 or 128 (kImageSizes)
  int64_t channels = 3;      // 1 (grey), 3 (RGB); 2 or 4 with alpha kept
  int64_t noise_dim = 100;
  int64_t ngf = 64;          // G's filters in its last block; earlier blocks double up to 8x
  int64_t ndf = 64;          // D's filters in its first block; later blocks double up to 8x
  float leaky_slope = 0.2f;
  float bn_eps = 1e-5f;
  float bn_momentum = 0.9f;  // Keras convention (running = 0.9 running + 0.1 batch)
  bool operator==(const ImageDcganConfig&) const = default;

  static constexpr int64_t kMaxMultiplier = 8;  // filters stop doubling at 8x (the 64-px net's widest)
  static constexpr int64_t kMaxChannels = 4;
};

// Why `size` cannot be the image DCGAN's --image-size ("" when it can): 32, 64 or 128.
std::string ImageDcganImageSizeProblem(int64_t size);

// The filters of each of the image DCGAN's blocks, from the 4x4 end (G's first block,
// D's last): log2(size / 4) blocks, base_filters doubling per block towards the 4x4 end
// up to kMaxMultiplier times. `size` must pass ImageDcganImageSizeProblem.
std::vector<int64_t> ImageDcganWidths(int64_t base_filters, int64_t image_size);

// Normalisation of the Pix2Pix networks (--norm).
enum class NormKind { kBatch, kInstance };

// What the Pix2Pix generator's network outputs (--predict): the next frame itself, or
// the change, which the generator adds to the condition's frame
// (worker/models/residual_next_frame.h). Either way the generator returns the next frame.
enum class NextFramePrediction { kFrame, kDelta };
const char* NextFramePredictionName(NextFramePrediction p);

// Which of an unrolled step's M predictions carry the loss (--unroll-loss): every one
// (the mean over the M steps) or only the last.
enum class UnrollLoss { kEvery, kLast };
const char* UnrollLossName(UnrollLoss l);

// Unrolled training of the next-frame model (--unroll, worker/models/pix2pix.h): each
// sample is a window of M + 1 frames; G is applied M times, each time to its own previous
// prediction, and the loss looks at the predictions against the true frames.
struct UnrollConfig {
  int64_t steps = 1;                     // M; 1 is ordinary one-step training
  UnrollLoss loss = UnrollLoss::kEvery;  // which predictions carry the loss
  // Gradients only through the last step (Brandstetter et al.'s pushforward trick): the
  // first M - 1 predictions are inputs, not part of the graph; implies the last-step loss.
  bool pushforward = false;
  // Curriculum: 0 trains every epoch at M; E > 0 starts at 1 step and adds one every E
  // epochs (of each batch size) up to M.
  int64_t curriculum_epochs = 0;
  bool operator==(const UnrollConfig&) const = default;

  // The steps an epoch (0-based, of its batch size) unrolls: in [1, steps].
  int64_t StepsAt(int64_t epoch) const;
  // Whether step k (1-based, of `unrolled`) carries the loss.
  bool CarriesLoss(int64_t k, int64_t unrolled) const {
    return k == unrolled || (loss == UnrollLoss::kEvery && !pushforward);
  }
};

// The Pix2Pix cGAN (worker/models/pix2pix.h, whose top comment gives the architecture and
// the decisions where the sources disagree). The defaults are the TF tutorial's 256 px
// network with the paper's LeakyReLU slope; BatchNorm keeps the project's (Keras)
// conventions, InstanceNorm PyTorch's (no affine parameters, no running statistics).
struct Pix2pixConfig {
  int64_t image_size = 256;     // a power of two >= kMinImageSize: the U-Net depth follows
  int64_t ngf = 64;             // generator filters in the first down block
  int64_t ndf = 64;             // discriminator filters in its first block
  NormKind norm = NormKind::kBatch;
  float l1_weight = 100.0f;     // G loss = BCE-GAN + l1_weight * L1(G(x), y)
  int64_t horizon = 1;          // frames between condition and target (the data's concern)
  NextFramePrediction predict = NextFramePrediction::kFrame;  // the network API's default; runs: --predict
  float input_noise = 0.0f;     // std of noise on the training condition's frame (the data's concern)
  UnrollConfig unroll;          // --unroll and its companions (rows of 4 + 3 M channels)
  float leaky_slope = 0.2f;     // the paper's and junyanz's (Keras' default 0.3 in the TF tutorial)
  float dropout = 0.5f;         // in the first three up blocks; 0 turns it off (tests, goldens)
  float bn_eps = 1e-3f;         // Keras BatchNormalization defaults, as the DCGAN
  float bn_momentum = 0.99f;
  float in_eps = 1e-5f;         // torch.nn.InstanceNorm2d's default
  bool operator==(const Pix2pixConfig&) const = default;

  static constexpr int64_t kMinImageSize = 32;  // PatchGAN: S/8 - 2 >= 2 logits a side
  static constexpr int64_t kMaxDepth = 8;       // U-Net-256: 8 down blocks
  static constexpr int64_t kInputChannels = 4;  // condition: frame (3) + obstacle mask (1)
  static constexpr int64_t kOutputChannels = 3; // target frame
};

// Why `size` cannot be a Pix2Pix --image-size ("" when it can): a power of two >= 32.
std::string Pix2pixImageSizeProblem(int64_t size);

}  // namespace gantry
