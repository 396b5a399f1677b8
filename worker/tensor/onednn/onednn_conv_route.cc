// Which route each convolution op takes on the oneDNN backend, chosen by measurement:
//   gantry-bench-kernels --kernels onednn --precision fp32,bf16 --batch 64 (and 256)
//                        --conv-route native,rounded-fp32,reference,batch-as-channels
// prints them side by side. The rules and their numbers (GFLOP/s, one thread of the
// reference machine, oneDNN 2.6.3 with AMX bf16, thread CPU time, batch 64 / 256):
//  - Backward-data into one input channel (the image side of D's first conv and of G's
//    last deconv): oneDNN's kernels scatter at 9 / 9 (fp32) and 21 / 19 (bf16); the
//    reference's GEMM + col2im runs 67 / 65 and 47 / 39. -> reference.
//  - bf16 backward-weights: oneDNN's bf16 kernels run 156 / 179 (G deconv1), 145 / 150
//    (G deconv2), 148 / 149 (D conv2), 19 / 18 (one-channel layers); the same on fp32
//    kernels with rounded operands 166 / 175, 141 / 108, 149 / 145, 54 / 53; as a forward
//    convolution with batch and channels swapped 700 / 363, 468 / 181, 490 / 292,
//    70 / 59. -> batch-as-channels. (For fp32 that route loses: 151 / 130 against
//    179 / 179 native for G deconv1, 51 / 34 against 81 / 80 for one channel.)
//    But only where the batch is large against the output map: that forward convolution
//    reduces over the batch at each output pixel, so the Pix2Pix layers (large maps, batch
//    2-16 per rank) ran it at 10-40 GFLOP/s, a bf16 step at 256 px batch 2 slower than fp32
//    (3.27 s against 1.2-1.3 s; 0.82-0.90 s native). Measured per layer (gantry-bench-
//    pix2pix --profile --precision bf16, 128 px batch 16; batch-as-channels against native):
//    output 4x4 157 / 83, 2x2 46 / 31, 8x8 214 / 201, 16x16 205 / 281, 32x32 139 / 286, the
//    7-channel 64x64 one 54 / 126; the DCGAN's at batch 8 (gantry-bench-kernels): 7x7 261 /
//    157 and 125 / 134, one channel 41-43 / 18; at batch 32: 7x7 412-710 / 145-171.
//    -> batch-as-channels where the output has at most 4 x batch pixels, or one input
//    channel (native runs those at 18 GFLOP/s at any batch); native elsewhere. A bf16
//    Pix2Pix step (1 rank): 256 px batch 8 2.49-2.56 s against 2.57-2.66 all native, 128
//    px batch 16 1.42 s against 1.51-1.57.
//  - Everything else: oneDNN's kernels at the problem's precision (bf16 forward and
//    backward-data 350-740 against 160-215 for fp32 kernels on rounded operands).
// A CPU with AVX512-BF16 but no AMX ranks two of these differently (gantry-bench-kernels
// --kernels onednn --precision bf16 --conv-route native,batch-as-channels,lowered, one
// thread of a 2-core AMD EPYC Zen 5, GFLOP/s native / batch-as-channels):
//  - batch-as-channels wins on small output maps only: the image DCGAN at 64 px, batch
//    64, output 4x4 148 / 207 and 191 / 222, 8x8 244 / 201 and 223 / 215, 16x16 229 / 143
//    and 233 / 142; batch 256: 4x4 211 / 281, 8x8 248 / 215, 16x16 244 / 145; the MNIST
//    DCGAN at batch 64, 7x7 183 / 219 and 217 / 275, one input channel 61 / 85; PatchGAN
//    at 128 px batch 4 and 16, 15x15 243 / 142 and 302 / 261. (At batch 16 it won the
//    image DCGAN's 8x8 and 16x16 maps too, 254 / 373 and 269 / 310: left native, for want
//    of a rule that holds across the nets.) -> where the output has at most 4 x batch
//    pixels and at most 7x7 of them, or one input channel.
//  - Backward-data into 3 channels (the image side of D's first convolution and of G's
//    last transposed one) scatters as on fp32 kernels: native 41 / 48 / 40, lowered 66 /
//    108 / 55 at batch 64 / 16 / 256; the transposed layer's forward (the same problem)
//    43 / 52 / 45 against 74 / 109 / 61; one channel (MNIST) 17 against 68. -> lowered,
//    under the fp32 kernels' rule (fewer than 8 input channels, at least 32 output).
// Image DCGAN step at 64 px, global batch 128 on 2 ranks, bf16: see docs/images.md.
//
// On fp32 kernels (fp32, fp16, bf16 without bf16 units) two more rules, from the Pix2Pix
// layers (gantry-bench-pix2pix --profile against the same with every convolution forced
// down kLowered; CPU ms per call, ngf = ndf = 64 at 128 px batch 4 and 8 and at 256 px
// batch 2, and ngf = ndf = 16 at 128 px batch 4):
//  - Weight-bound problems go kLowered. oneDNN's kernels reorder the weights to a
//    blocked layout on every call (and a weight gradient back, adding it to the
//    caller's): work in proportion to the weights. The lowered route's extra work, the
//    column matrix, is in proportion to batch x output pixels x in_channels x k x k. So
//    lowered wins where batch x output pixels is small against out_channels (the ratio
//    of the two); the U-Net's inner layers (4-8 Mi weights each at ngf 64) ran at 5-60
//    GFLOP/s natively. Per op, lowered wins up to:
//      forward          batch x pixels <= out_channels / 4 (8x512x4x4 -> 1024x2x2: 4.9
//                       against 13.4 ms; at / 2 a loss, 8x256x16x16 -> 1024x8x8: 32.5
//                       against 27.6 ms),
//      backward-data    <= out_channels / 2 (2x256x32x32 -> 1024x16x16: 30.3 against
//                       33.9 ms; at 1x a draw, 8x256x16x16 -> 512x8x8: 18.1 / 17.4),
//      backward-weights <= out_channels (8x512x8x8 -> 1024x4x4: 20.9 against 36.4 ms,
//                       8x256x16x16 -> 512x8x8: 17.9 against 20.6; at 2x a draw, at 7x
//                       a loss: 4x64x16x16 -> 128x15x15, 5.0 against 3.1 ms).
//    Not where the output has fewer than 8 channels (PatchGAN's logits: the GEMM is then
//    a matrix-vector product, and native wins 3 / 7 ms).
//  - One output channel (PatchGAN's logits) goes kOneOutput: oneDNN's blocked kernels
//    ran 2x512x31x31 -> 1x30x30 (256 px, batch 2) at 8-10 GFLOP/s, 7.3 / 9.3 / 7.0 ms per
//    step for forward (2 calls) / backward-data (3) / backward-weights (2); the direct
//    kernels (one_output_conv.h) 2.6 / 3.4 / 3.5 ms (17-26 GFLOP/s).
//  - Fewer than 8 input channels (the image side: D's first convolution, G's last
//    transposed one), where oneDNN's kernels scatter (backward-data) or run AVX2 code
//    (backward-weights): backward-data goes kLowered from 32 output channels
//    (8x3x128x128 -> 128x64x64: 4.8 against 16.5 ms; 4x3x128x128 -> 32x64x64: 1.0
//    against 2.3; 4x7x128x128 -> 16x64x64 loses, 1.9 against 1.3), backward-weights from
//    2 input channels and 64 output channels (8x7x128x128 -> 64x64x64: 10.7 against
//    16.9 ms; with 16 or 32 output channels it loses, 3.9 against 2.6 ms). The DCGAN's
//    one-channel layers (gantry-bench-kernels, batch 64): backward-data 70-72
//    GFLOP/s lowered, as on the reference (71) that took it before, against 10 natively;
//    but backward-weights 55 against 85 natively.
//  - fp32 stride-1 4x4 problems (PatchGAN's conv4, ndf*4 -> ndf*8 channels) go kWinograd
//    (worker/tensor/cpu/winograd_conv.h: F(3x3, 4x4), 4x fewer multiply-adds, plus
//    transforms in proportion to the data and a weight transform per call). ms per call,
//    one thread, oneDNN's kernels -> Winograd (forward / backward-data / backward-weights;
//    columns = batch x the 3x3 tiles of the plane the pass writes, 25 or 36 a sample at
//    128 px, 121 at 256 px), timed by a one-off driver of the two routes; gantry-bench-
//    kernels --net patchgan --image-size S --batch B --ndf F --kernels onednn --conv-route
//    native,winograd times the same shapes (in GFLOP/s; 256 -> 512 is ndf 64):
//      256 -> 512 channels, 128 px batch 2   12.9 / 12.9 / 13.4 -> 9.6 / 16.8 / 7.7
//                           128 px batch 4   23.8 / 25.2 / 27.2 -> 16.6 / 27.3 / 15.9
//                           128 px batch 8   46.4 / 47.6 / 52.1 -> 26.7 / 43.5 / 29.0
//                           256 px batch 2   58.9 / 49.7 / 54.9 -> 30.5 / 37.6 / 26.6
//                           256 px batch 8   225 / 182 / 219 -> 97 / 105 / 100
//      128 -> 256 channels, 128 px batch 2   3.1 / 3.1 / 3.4 -> 2.5 / 4.6 / 2.3
//                           128 px batch 8   11.5 / 11.7 / 12.3 -> 7.4 / 11.8 / 7.5
//      64 -> 128 channels,  128 px batch 2   0.74 / 0.74 / 0.81 -> 0.81 / 1.46 / 0.66
//                           128 px batch 8   2.66 / 2.80 / 2.94 -> 2.20 / 3.99 / 2.68
//                           256 px batch 8   13.9 / 12.8 / 13.9 -> 8.9 / 10.5 / 9.1
//    Where the tiles overhang the plane, their computed area outside it is wasted: on a
//    7x7 map (PatchGAN at 64 px) 40% of it, and there Winograd loses whatever the batch
//    (GFLOP/s counted as a direct convolution, forward / backward-data / backward-weights,
//    oneDNN -> Winograd; gantry-bench-kernels --net patchgan --conv-route native,winograd):
//      256 -> 512, 64 px batch 4    156 / 151 / 123 -> 128 / 60 / 151
//                  64 px batch 16   166 / 165 / 135 -> 149 / 109 / 141
//      128 -> 256, 64 px batch 32   180 / 179 / 158 -> 159 / 112 / 122
//    while whole tiles win from batch 1 (256 -> 512 at 128 px: 161 / 159 / 134 -> 201 / 71 /
//    206), and backward-data on PatchGAN at 32 px (a 4x4 dx plane, 44% covered) loses 3.5x
//    at batch 64 (153 -> 44).
//    -> Winograd from 64 channels on each side where at least 75% of the tiles' area is
//    inside the plane and columns x the narrower channel count reach 6 Ki (forward,
//    backward-weights) or 48 Ki (backward-data: a loss at 18 Ki and 37 Ki, a draw at 37
//    Ki, wins from 62 Ki). The whole layer at 256 px batch 8 (gantry-bench-pix2pix
//    --profile, per step): 1368 -> ~540 ms, the step 4.83 -> 3.97 s.
//  - A kernel that covers the whole unpadded input (the image DCGAN's 4x4 -> 1x1 logit,
//    512 -> 1 channels, and its generator's first layer, the adjoint of 512x4x4 -> 100x1x1)
//    is a matrix product over the batch: goes kLowered, whose column matrix is then the
//    batch's inputs side by side and whose one GEMM per chunk is the whole op. Measured
//    (gantry-bench-step --model image-dcgan --image-size 64 --batch-size 128 --profile,
//    2 ranks, fp32, AVX2 Zen 3, CPU ms per step of rank 0): the logit layer's forward,
//    backward-data and both-backward ran 20 + 30 + 87 ms on kOneOutput (whose per-plane
//    copies dominate 1-pixel outputs), and G's first layer 16 + 11 ms natively (9-13
//    GFLOP/s).
//  - Except on AVX2 (a CPU without AVX-512, or ONEDNN_MAX_CPU_ISA=AVX2): there oneDNN's
//    kernels run the one-input-channel backward-weights at 13 GFLOP/s, the reference's
//    im2col + Eigen GEMM at 55-58, lowered at 48-49 (fp32; bf16 on rounded operands 12 /
//    42 / 38; gantry-bench-kernels --batch 128 --conv-route auto,reference,lowered under
//    ONEDNN_MAX_CPU_ISA=AVX2, Sapphire Rapids). -> reference there.
#include <algorithm>
#include <atomic>

#include "worker/tensor/cpu/one_output_conv.h"
#include "worker/tensor/cpu/winograd_conv.h"
#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry {
namespace {

// -1: no override; else a ConvRoute.
std::atomic<int> forced_route{-1};

// Input channels below this are the image side, where oneDNN's kernels scatter.
constexpr int64_t kFewChannels = 8;

// The backward-data into the image side from 32 or more channels, which lowered wins on
// oneDNN's fp32 kernels and on its AVX512-BF16 ones (see the top comment).
bool ImageSideBackwardDataLowers(const ConvProblem& p, ConvOp op) {
  return op == ConvOp::kBackwardData && p.in_channels < kFewChannels && p.out_channels >= 32;
}

// Where kLowered beats oneDNN's fp32 kernels (see the top comment).
bool LoweredWins(const ConvProblem& p, ConvOp op) {
  if (p.in_channels < kFewChannels) {
    if (op == ConvOp::kBackwardData) return ImageSideBackwardDataLowers(p, op);
    if (op == ConvOp::kBackwardWeights) return p.in_channels > 1 && p.out_channels >= 64;
  }
  if (p.out_channels < kFewChannels) return false;
  // Multiply-adds per weight; lowered wins while they are few against out_channels.
  const int64_t reuse = p.batch * p.out_height * p.out_width;
  switch (op) {
    case ConvOp::kForward: return 4 * reuse <= p.out_channels;
    case ConvOp::kBackwardData: return 2 * reuse <= p.out_channels;
    case ConvOp::kBackwardWeights: return reuse <= p.out_channels;
  }
  return false;
}

// Where batch-as-channels beats oneDNN's bf16 backward-weights kernels (see the top
// comment): its forward convolution reduces over the batch at each of the output's pixels,
// so it needs a batch that is large against the output map; without AMX, a small map too.
bool BatchAsChannelsWins(const ConvProblem& p) {
  const int64_t pixels = p.out_height * p.out_width;
  if (p.in_channels == 1) return true;
  if (onednn::HasAmxBf16Kernels()) return pixels <= 4 * p.batch;
  constexpr int64_t kMaxPixelsWithoutAmx = 7 * 7;
  return pixels <= std::min(4 * p.batch, kMaxPixelsWithoutAmx);
}

// Where kWinograd beats oneDNN's fp32 kernels (see the top comment): tiles mostly inside
// the plane, and the GEMMs' width times the narrower channel count against a bar that
// backward-data (the costliest transforms) sets 8x higher.
bool WinogradWins(const ConvProblem& p, ConvOp op) {
  constexpr int64_t kMinChannels = 64;
  constexpr double kMinCoverage = 0.75;
  if (!WinogradConvApplies(p) || WinogradTileCoverage(p, op) < kMinCoverage) return false;
  const int64_t narrow = std::min(p.in_channels, p.out_channels);
  const int64_t bar = op == ConvOp::kBackwardData ? 48 * 1024 : 6 * 1024;
  return narrow >= kMinChannels && WinogradColumns(p, op) * narrow >= bar;
}

}  // namespace

std::string_view ConvRouteName(ConvRoute route) {
  switch (route) {
    case ConvRoute::kNative: return "native";
    case ConvRoute::kRoundedFp32: return "rounded-fp32";
    case ConvRoute::kReference: return "reference";
    case ConvRoute::kBatchAsChannels: return "batch-as-channels";
    case ConvRoute::kLowered: return "lowered";
    case ConvRoute::kOneOutput: return "one-output";
    case ConvRoute::kWinograd: return "winograd";
  }
  return "?";
}

void OnednnBackend::ForceConvRoute(std::optional<ConvRoute> route) {
  forced_route.store(route ? static_cast<int>(*route) : -1);
}

ConvRoute OnednnBackend::ChooseConvRoute(const ConvProblem& p, ConvOp op) {
  // fp16 (no x86 fp16 kernels in oneDNN 2.6) and bf16 on a CPU without bf16 kernels have
  // no native route; batch-as-channels is a backward-weights route only.
  const bool fp32_kernels = onednn::RunsOnFp32Kernels(p.precision);
  const auto native_or_rounded = [fp32_kernels, op, &p](ConvRoute r) {
    if (r == ConvRoute::kBatchAsChannels && op != ConvOp::kBackwardWeights) r = ConvRoute::kNative;
    if (r == ConvRoute::kOneOutput && !OneOutputConvApplies(p)) r = ConvRoute::kNative;
    if (r == ConvRoute::kWinograd && !(WinogradConvApplies(p) && p.precision == MathPrecision::kFp32)) {
      r = ConvRoute::kNative;
    }
    return r == ConvRoute::kNative && fp32_kernels ? ConvRoute::kRoundedFp32 : r;
  };
  const int forced = forced_route.load();
  if (forced >= 0) return native_or_rounded(static_cast<ConvRoute>(forced));
  if (p.kernel_covers_input()) return ConvRoute::kLowered;
  if (p.precision == MathPrecision::kFp32 || fp32_kernels) {
    if (OneOutputConvApplies(p)) return ConvRoute::kOneOutput;
    if (LoweredWins(p, op)) return ConvRoute::kLowered;
  }
  if (p.precision == MathPrecision::kBf16 && !fp32_kernels && !onednn::HasAmxBf16Kernels() &&
      ImageSideBackwardDataLowers(p, op)) {
    return ConvRoute::kLowered;
  }
  if (p.precision == MathPrecision::kFp32 && WinogradWins(p, op)) return ConvRoute::kWinograd;
  if (p.in_channels == 1 && op == ConvOp::kBackwardData) return ConvRoute::kReference;
  if (p.in_channels == 1 && op == ConvOp::kBackwardWeights && (p.precision == MathPrecision::kFp32 || fp32_kernels) &&
      !onednn::HasAvx512Fp32Kernels()) {
    return ConvRoute::kReference;
  }
  // Batch-as-channels wins only on bf16 kernels (on fp32 ones it loses, see above).
  if (p.precision == MathPrecision::kBf16 && !fp32_kernels && op == ConvOp::kBackwardWeights &&
      BatchAsChannelsWins(p)) {
    return ConvRoute::kBatchAsChannels;
  }
  return native_or_rounded(ConvRoute::kNative);
}

}  // namespace gantry
