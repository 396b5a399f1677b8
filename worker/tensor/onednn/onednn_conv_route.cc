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
//  - Everything else: oneDNN's kernels at the problem's precision (bf16 forward and
//    backward-data 350-740 against 160-215 for fp32 kernels on rounded operands).
// A CPU with AVX512-BF16 but no AMX may rank these differently; measure there.
//
// On fp32 kernels (fp32, fp16, bf16 without bf16 units) two more rules, from the Pix2Pix
// layers (gantry-bench-pix2pix --profile against the same with every convolution forced
// down kLowered; CPU ms per call, 128 px at batch 4 and 8, 256 px at batch 2):
//  - Weight-bound problems go kLowered. oneDNN's kernels reorder the weights to a
//    blocked layout on every call (and a weight gradient back, adding it to the caller's),
//    which costs about as much as the arithmetic when each weight takes part in few
//    multiply-adds: batch x output pixels of them. The U-Net's inner layers (4-8 Mi
//    weights each at ngf 64) ran at 5-60 GFLOP/s natively. Per op, lowered wins up to:
//      forward          batch x pixels <= 128 (e.g. 8x512x4x4 -> 1024x2x2: 4.9 against
//                       13.4 ms; at 256 it is a draw: 15.9 / 16.9 and 9.1 / 8.1 ms),
//      backward-data    <= 512 (2x512x16x16 -> 1024x8x8: 18.5 against 24.4 ms),
//      backward-weights <= 1024 (8x512x8x8 -> 1024x4x4: 20.9 against 36.4 ms; at 2048
//                       a draw).
//    Not where the output has fewer than 8 channels (PatchGAN's logits: the GEMM is then
//    a matrix-vector product, and native wins 3 / 7 ms).
//  - Fewer than 8 input channels (the image side: D's first convolution, G's last
//    transposed one): backward-data goes kLowered, and so does backward-weights from 2
//    channels, where oneDNN's kernels scatter or run AVX2 code (8x3x128x128 ->
//    128x64x64 backward-data 4.8 against 16.5 ms, 8x7x128x128 -> 64x64x64
//    backward-weights 10.7 against 16.9 ms). The DCGAN's one-channel layers
//    (gantry-bench-kernels, batch 64): backward-data 72-80 GFLOP/s lowered against 67
//    on the reference and 10 natively, but backward-weights 55 against 85 natively.
#include <atomic>

#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry {
namespace {

// -1: no override; else a ConvRoute.
std::atomic<int> forced_route{-1};

// Per op, the most multiply-adds per weight (batch x output pixels) at which kLowered
// beats oneDNN's fp32 kernels (see the top comment).
int64_t LoweredMaxReuse(ConvOp op) {
  switch (op) {
    case ConvOp::kForward: return 128;
    case ConvOp::kBackwardData: return 512;
    case ConvOp::kBackwardWeights: return 1024;
  }
  return 0;
}

// Where kLowered beats oneDNN's fp32 kernels.
bool LoweredWins(const ConvProblem& p, ConvOp op) {
  constexpr int64_t kFewChannels = 8;
  if (p.in_channels < kFewChannels && op == ConvOp::kBackwardData) return true;
  if (p.in_channels < kFewChannels && p.in_channels > 1 && op == ConvOp::kBackwardWeights) return true;
  if (p.out_channels < kFewChannels) return false;
  return p.batch * p.out_height * p.out_width <= LoweredMaxReuse(op);
}

}  // namespace

std::string_view ConvRouteName(ConvRoute route) {
  switch (route) {
    case ConvRoute::kNative: return "native";
    case ConvRoute::kRoundedFp32: return "rounded-fp32";
    case ConvRoute::kReference: return "reference";
    case ConvRoute::kBatchAsChannels: return "batch-as-channels";
    case ConvRoute::kLowered: return "lowered";
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
  const auto native_or_rounded = [fp32_kernels, op](ConvRoute r) {
    if (r == ConvRoute::kBatchAsChannels && op != ConvOp::kBackwardWeights) r = ConvRoute::kNative;
    return r == ConvRoute::kNative && fp32_kernels ? ConvRoute::kRoundedFp32 : r;
  };
  const int forced = forced_route.load();
  if (forced >= 0) return native_or_rounded(static_cast<ConvRoute>(forced));
  if ((p.precision == MathPrecision::kFp32 || fp32_kernels) && LoweredWins(p, op)) return ConvRoute::kLowered;
  if (p.in_channels == 1 && op == ConvOp::kBackwardData) return ConvRoute::kReference;
  // Batch-as-channels wins only on bf16 kernels (on fp32 ones it loses, see above).
  if (p.precision == MathPrecision::kBf16 && !fp32_kernels && op == ConvOp::kBackwardWeights) {
    return ConvRoute::kBatchAsChannels;
  }
  return native_or_rounded(ConvRoute::kNative);
}

}  // namespace gantry
