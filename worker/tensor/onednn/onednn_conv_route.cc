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
#include <atomic>

#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry {
namespace {

// -1: no override; else a ConvRoute.
std::atomic<int> forced_route{-1};

}  // namespace

std::string_view ConvRouteName(ConvRoute route) {
  switch (route) {
    case ConvRoute::kNative: return "native";
    case ConvRoute::kRoundedFp32: return "rounded-fp32";
    case ConvRoute::kReference: return "reference";
    case ConvRoute::kBatchAsChannels: return "batch-as-channels";
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
  if (p.in_channels == 1 && op == ConvOp::kBackwardData) return ConvRoute::kReference;
  // Batch-as-channels wins only on bf16 kernels (on fp32 ones it loses, see above).
  if (p.precision == MathPrecision::kBf16 && !fp32_kernels && op == ConvOp::kBackwardWeights) {
    return ConvRoute::kBatchAsChannels;
  }
  return native_or_rounded(ConvRoute::kNative);
}

}  // namespace gantry
