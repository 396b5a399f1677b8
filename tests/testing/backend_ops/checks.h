// The op suite's check functions, one per Backend op: each runs its row's shapes on the
// backend under test (OpRun) and compares every output with a reference computed on the
// host in double from the op's definition in worker/tensor/backend.h.
#pragma once

#include "tests/testing/backend_ops/op_run.h"

namespace gantry::testing {

// Matrix products (check_products.cc): outputs "product" (against the reference on
// operands rounded to the row's precision) and, for 16-bit rows, "product vs fp32".
void CheckGemm(OpRun& run);
void CheckConvForward(OpRun& run);
void CheckConvBackwardData(OpRun& run);
void CheckConvBackwardWeights(OpRun& run);
// ... and "separate passes": the fused backwards give exactly the passes they stand for.
void CheckConvBackward(OpRun& run);
void CheckConvTransposeBackward(OpRun& run);

// Per-channel ops (check_channel_ops.cc).
void CheckAddChannelBias(OpRun& run);
void CheckChannelSum(OpRun& run);
void CheckChannelAffine(OpRun& run);
void CheckAddChannelBiasActivation(OpRun& run);

// Element-wise ops and dropout (check_elementwise.cc).
void CheckActivationForward(OpRun& run);
void CheckActivationBackward(OpRun& run);
void CheckMultiply(OpRun& run);
void CheckAxpy(OpRun& run);
void CheckScale(OpRun& run);
void CheckCopy(OpRun& run);
void CheckDropoutForward(OpRun& run);

// Batch normalisation and its activation fusions (check_batchnorm.cc).
void CheckBatchNormStats(OpRun& run);
void CheckBatchNormApply(OpRun& run);
void CheckBatchNormBackward(OpRun& run);
void CheckBatchNormActivationForward(OpRun& run);
void CheckBatchNormActivationBackward(OpRun& run);

// Losses and optimizer steps (check_losses_optimizers.cc).
void CheckBceWithLogits(OpRun& run);
void CheckL1Loss(OpRun& run);
void CheckAdamStep(OpRun& run);
void CheckSgdStep(OpRun& run);

// 16-bit copies and the loss scaler's passes (check_sixteen_bit.cc).
void CheckNarrowToBf16(OpRun& run);
void CheckWidenFromBf16(OpRun& run);
void CheckToWireBf16(OpRun& run);
void CheckUnscaleAndCheckFinite(OpRun& run);
void CheckUnscaleFromBf16AndCheckFinite(OpRun& run);

}  // namespace gantry::testing
