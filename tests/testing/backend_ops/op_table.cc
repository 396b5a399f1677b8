// The op suite's rows (a declarative table: one row per Backend op, precision and set of
// shapes) and the shapes they run on. Bounds are the named constants of
// tests/testing/backend_compare.h, each derived there; 0 is exact.
#include <string>

#include "tests/testing/backend_compare.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/op_case.h"

namespace gantry::testing {
namespace {

ConvProblem Conv(int64_t n, int64_t c, int64_t o, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = h, .in_width = w,
                     .out_height = ConvOutSize(h, k, s, p), .out_width = ConvOutSize(w, k, s, p),
                     .kernel = k, .stride = s, .padding = p};
}

// Every transpose combination of each shape.
std::vector<GemmShape> AllTransposes(std::vector<GemmShape> shapes) {
  std::vector<GemmShape> out;
  for (const GemmShape& s : shapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) out.push_back({ta, tb, s.m, s.n, s.k, s.alpha, s.beta, s.pad});
    }
  }
  return out;
}

// clang-format off
// {ta, tb, m, n, k, alpha, beta, pad}. Tails off every vector width and block, padded rows
// (leading dimensions past the matrix), alpha and beta (beta == 0 over a C of NaN),
// k == 0, and the DCGAN's Linear layers at batch 3.
std::vector<GemmShape> GemmShapes() {
  std::vector<GemmShape> shapes = AllTransposes({
      {false, false, 5, 7, 3, 1.0f, 0.0f, 0},   {false, false, 13, 4, 17, 1.0f, 0.0f, 0},
      {false, false, 1, 1, 9, 1.0f, 0.0f, 0},   {false, false, 6, 5, 4, 0.5f, 1.0f, 0},
      {false, false, 6, 5, 4, -2.0f, 0.25f, 0}, {false, false, 6, 5, 4, 1.0f, -1.0f, 0},
      {false, false, 4, 6, 5, 1.0f, 0.0f, 3},   {false, false, 9, 3, 7, 1.5f, 0.5f, 5},
      {false, false, 2, 2, 2, 1.0f, 0.0f, 0},   {false, false, 37, 37, 37, 1.0f, 0.0f, 0},
  });
  const std::vector<GemmShape> more = {
      {false, false, 70, 90, 300, 1.0f, 1.0f, 2},   // past Eigen's blocking
      {true, true, 65, 33, 129, 0.5f, 0.0f, 1},
      {false, false, 17, 33, 65, 0.5f, 1.5f, 3},
      {true, true, 9, 31, 20, 1.0f, -1.0f, 1},
      {true, false, 1, 1, 1, 2.0f, 0.0f, 0},
      {false, false, 2, 2, 0, 1.0f, 0.5f, 0},       // k == 0: C = beta C
      {false, false, 5, 7, 0, 1.0f, 0.0f, 2},       // ... and C = 0
      {false, true, 3, 12544, 100, 1.0f, 0.0f, 0},  // G's Linear forward at batch 3: z W^T
      {true, false, 12544, 100, 3, 1.0f, 1.0f, 0},  // its weight gradient: dW += dy^T z
      {false, true, 3, 1, 6272, 1.0f, 0.0f, 0},     // D's Linear forward
      {true, false, 1, 6272, 3, 1.0f, 1.0f, 0},     // its weight gradient
      {false, false, 3, 6272, 1, 1.0f, 0.0f, 0},    // its input gradient
  };
  shapes.insert(shapes.end(), more.begin(), more.end());
  return shapes;
}

// The same Linear layers at the DCGAN's training batch, 64.
const std::vector<GemmShape> kTrainingBatchGemmShapes = {
    {false, true, 64, 12544, 100, 1.0f, 0.0f, 0}, {true, false, 12544, 100, 64, 1.0f, 1.0f, 0},
    {false, true, 64, 1, 6272, 1.0f, 0.0f, 0},    {true, false, 1, 6272, 64, 1.0f, 1.0f, 0},
    {false, false, 64, 6272, 1, 1.0f, 0.0f, 0},
};

// Strides 1-3, paddings 0-2, kernels 3-5, odd sizes, channels off the 16-blocking, rows
// no window reaches, one output channel, and the DCGAN's and PatchGAN's shapes.
const std::vector<ConvProblem> kConvProblems = {
    Conv(2, 128, 256, 7, 7, 5, 1, 2),   // G deconv1's adjoint (DCGAN, small batch)
    Conv(3, 64, 128, 14, 14, 5, 2, 2),  // G deconv2's adjoint and D conv2
    Conv(1, 1, 64, 28, 28, 5, 2, 2),    // G deconv3's adjoint and D conv1
    Conv(1, 3, 5, 9, 7, 3, 2, 1),       // odd sizes, batch 1
    Conv(3, 2, 4, 6, 6, 3, 2, 0),       // a trailing input row no window reaches
    Conv(3, 17, 19, 10, 9, 4, 3, 2),    // channels off the 16-blocking, stride 3
    Conv(2, 5, 3, 8, 8, 5, 1, 2),
    Conv(2, 40, 1, 11, 9, 4, 1, 1),     // one output channel (PatchGAN's logits)
    Conv(3, 6, 1, 9, 7, 3, 2, 0),       // one output channel, strided, a trailing row
    Conv(1, 3, 1, 37, 35, 5, 3, 2),     // one output channel, rows wider than a block
    Conv(2, 16, 32, 16, 16, 4, 2, 1),   // a U-Net block's shape (4x4, stride 2)
    Conv(4, 64, 64, 16, 16, 4, 1, 1),   // PatchGAN's stride-1 4x4 (Winograd's, on oneDNN fp32)
    Conv(3, 40, 1, 4, 4, 4, 1, 0),      // a kernel over the whole input (the image DCGAN's logit)
    Conv(3, 24, 10, 4, 4, 4, 1, 0),     // ... into several channels (its generator's first layer's adjoint)
};
// The fused backwards' problems: where oneDNN runs both passes on its kernels and shares
// dy (the U-Net block at fp32), where a pass is lowered or staged, and odd shapes.
const std::vector<ConvProblem> kFusedConvProblems = {
    Conv(2, 16, 32, 16, 16, 4, 2, 1), Conv(3, 64, 128, 14, 14, 5, 2, 2), Conv(3, 17, 19, 10, 9, 4, 3, 2),
    Conv(1, 3, 5, 9, 7, 3, 2, 1),     Conv(3, 2, 4, 6, 6, 3, 2, 0),      Conv(2, 40, 1, 11, 9, 4, 1, 1),
};
// The DCGAN's convolutions at its training batch.
const std::vector<ConvProblem> kTrainingBatchConvProblems = {
    Conv(64, 128, 256, 7, 7, 5, 1, 2), Conv(64, 64, 128, 14, 14, 5, 2, 2), Conv(64, 1, 64, 28, 28, 5, 2, 2)};

// [n, c, hw] with tails, hw == 1 (BatchNorm after a Linear layer) and one element per
// channel; on devices also the DCGAN's BatchNorm layouts at batch 64.
const std::vector<Layout> kLayouts = {{3, 5, 7}, {1, 1, 1}, {2, 1, 1}, {16, 3, 37}, {5, 2, 9},
                                      {3, 17, 33}, {3, 5, 16}, {4, 64, 49}, {4, 300, 1}};
const std::vector<Layout> kTrainingBatchLayouts = {{64, 256, 49}, {64, 128, 49}, {64, 64, 196}, {64, 12544, 1}};
// Lengths around 16-float vectors; on devices also a G-sized activation or buffer.
const std::vector<int64_t> kCounts = {1, 15, 16, 17, 33, 1000, 100003};
const std::vector<int64_t> kTrainingBatchCounts = {64 * 12544};
const std::vector<int64_t> kDropoutCounts = {1, 17, 1000, 100003};
const std::vector<int64_t> kTrainingBatchDropoutCounts = {64 * 6272};
const std::vector<int64_t> kLossCounts = {1, 3, 17, 64, 512};
const std::vector<int64_t> kTrainingBatchLossCounts = {64 * 784};
const std::vector<int64_t> kOptimizerCounts = {1, 17, 1000, 100003};
const std::vector<int64_t> kTrainingBatchOptimizerCounts = {1028545};  // G's parameters
const std::vector<int64_t> kSixteenBitCounts = {0, 1, 12, 15, 16, 17, 33, 1000, 100003};
const std::vector<int64_t> kTrainingBatchSixteenBitCounts = {300001};
// clang-format on

std::vector<OutputBound> ProductBounds(MathPrecision p, bool fused) {
  std::vector<OutputBound> b;
  if (p == MathPrecision::kFp32) {
    b = {{"product", kReorderedSumTolerance, kReorderedSumTolerance}};
  } else {
    const double rounding = p == MathPrecision::kBf16 ? kBf16ProductTolerance : kFp16ProductTolerance;
    b = {{"product", kReorderedSumTolerance, kTensorCoreSumTolerance}, {"product vs fp32", rounding, rounding}};
  }
  if (fused) b.push_back({"separate passes", 0.0, 0.0});
  return b;
}

// One row per precision of a product op.
void AddProductRows(std::vector<OpCase>& rows, std::string_view op, const OpShapes& shapes,
                    const OpShapes& device_shapes, void (*check)(OpRun&)) {
  const bool fused = op == "ConvBackward" || op == "ConvTransposeBackward";
  for (MathPrecision p : {MathPrecision::kFp32, MathPrecision::kBf16, MathPrecision::kFp16}) {
    const std::string name = std::string(op) + "_" + std::string(MathPrecisionName(p));
    rows.push_back({name, op, p, shapes, device_shapes, ProductBounds(p, fused), check});
  }
}

// An fp32 row named after its op.
OpCase Row(std::string_view op, std::vector<OutputBound> bounds, const OpShapes& shapes, const OpShapes& device_shapes,
           void (*check)(OpRun&)) {
  return {std::string(op), op, MathPrecision::kFp32, shapes, device_shapes, std::move(bounds), check};
}

std::vector<OpCase> BuildRows() {
  std::vector<OpCase> rows;
  AddProductRows(rows, "Gemm", GemmShapes(), kTrainingBatchGemmShapes, &CheckGemm);
  const OpShapes conv = kConvProblems, conv64 = kTrainingBatchConvProblems;
  AddProductRows(rows, "ConvForward", conv, conv64, &CheckConvForward);
  AddProductRows(rows, "ConvBackwardData", conv, conv64, &CheckConvBackwardData);
  AddProductRows(rows, "ConvBackwardWeights", conv, conv64, &CheckConvBackwardWeights);
  const OpShapes fused = kFusedConvProblems;
  AddProductRows(rows, "ConvBackward", fused, conv64, &CheckConvBackward);
  AddProductRows(rows, "ConvTransposeBackward", fused, conv64, &CheckConvTransposeBackward);
  const double e = kElementwiseTolerance, bn_dx = kBatchNormInputGradientTolerance;
  const OpShapes layouts = kLayouts, layouts64 = kTrainingBatchLayouts, counts = kCounts;
  const OpShapes counts64 = kTrainingBatchCounts, bits = kSixteenBitCounts, bits64 = kTrainingBatchSixteenBitCounts;
  const std::vector<OpCase> others = {
      Row("AddChannelBias", {{"y", 0.0, 0.0}}, layouts, layouts64, &CheckAddChannelBias),
      Row("ChannelSum", {{"out", e, e}}, layouts, layouts64, &CheckChannelSum),
      Row("ChannelAffine", {{"y", e, e}}, layouts, layouts64, &CheckChannelAffine),
      Row("ActivationForward", {{"y (leaky-relu, relu)", 0.0, e}, {"y (tanh, sigmoid)", e, e}}, counts, counts64,
          &CheckActivationForward),
      Row("ActivationBackward", {{"dx (leaky-relu, relu)", 0.0, e}, {"dx (tanh, sigmoid)", e, e}}, counts, counts64,
          &CheckActivationBackward),
      Row("Multiply", {{"out", 0.0, 0.0}}, counts, counts64, &CheckMultiply),
      Row("Axpy", {{"y", e, e}}, counts, counts64, &CheckAxpy),
      Row("Scale", {{"x", 0.0, e}}, counts, counts64, &CheckScale),
      Row("Copy", {{"dst", 0.0, 0.0}}, counts, counts64, &CheckCopy),
      Row("DropoutForward", {{"mask, y", 0.0, 0.0}}, kDropoutCounts, kTrainingBatchDropoutCounts, &CheckDropoutForward),
      Row("BatchNormStats", {{"mean", kDoubleSumTolerance, e}, {"var", e, e}}, layouts, layouts64,
          &CheckBatchNormStats),
      Row("BatchNormApply", {{"y", e, e}}, layouts, layouts64, &CheckBatchNormApply),
      Row("BatchNormBackward", {{"dgamma, dbeta", e, e}, {"dx", bn_dx, bn_dx}}, layouts, layouts64,
          &CheckBatchNormBackward),
      Row("BatchNormActivationForward", {{"y", e, e}}, layouts, layouts64, &CheckBatchNormActivationForward),
      Row("BatchNormActivationBackward", {{"dgamma, dbeta", e, e}, {"dx", bn_dx, bn_dx}}, layouts, layouts64,
          &CheckBatchNormActivationBackward),
      Row("AddChannelBiasActivation", {{"y", e, e}}, layouts, layouts64, &CheckAddChannelBiasActivation),
      Row("BceWithLogits", {{"loss", e, e}, {"dlogits", e, e}}, kLossCounts, kTrainingBatchLossCounts,
          &CheckBceWithLogits),
      Row("L1Loss", {{"loss", kExactTermsSumTolerance, kExactTermsSumTolerance}, {"dpred", 0.0, 0.0}}, kLossCounts,
          kTrainingBatchLossCounts, &CheckL1Loss),
      Row("AdamStep", {{"m, v, param", e, e}}, kOptimizerCounts, kTrainingBatchOptimizerCounts, &CheckAdamStep),
      Row("SgdStep", {{"buf, param", e, e}}, kOptimizerCounts, kTrainingBatchOptimizerCounts, &CheckSgdStep),
      Row("NarrowToBf16", {{"bits", 0.0, 0.0}}, bits, bits64, &CheckNarrowToBf16),
      Row("WidenFromBf16", {{"values", 0.0, 0.0}}, bits, bits64, &CheckWidenFromBf16),
      Row("ToWireBf16", {{"bits", 0.0, 0.0}}, bits, bits64, &CheckToWireBf16),
      Row("UnscaleAndCheckFinite", {{"grads, verdict", 0.0, 0.0}}, bits, bits64, &CheckUnscaleAndCheckFinite),
      Row("UnscaleFromBf16AndCheckFinite", {{"grads, verdict", 0.0, 0.0}}, bits, bits64,
          &CheckUnscaleFromBf16AndCheckFinite),
  };
  rows.insert(rows.end(), others.begin(), others.end());
  return rows;
}

}  // namespace

const std::vector<OpCase>& OpCases() {
  static const std::vector<OpCase> rows = BuildRows();
  return rows;
}

std::string Describe(const OpCase& c) { return c.name; }

}  // namespace gantry::testing
