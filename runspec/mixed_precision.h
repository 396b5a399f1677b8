// The mixed-precision settings of a run, as one struct that travels from the
// configuration to DataParallelStep.
//
//   precision        operand format of the matrix products (Context::precision); master
//                    weights, optimizer state and gradients stay fp32
//   loss_scale       one LossScaler per network (G and D skip steps independently)
//   allreduce_dtype  what the gradients travel as: fp32, or bf16 with each pair of
//                    partial sums added in fp32 (Communicator::AllReduceSumBf16)
//   inject_inf       debug only: an inf put into one rank's gradient at one step, to
//                    show that every rank skips that step
#pragma once

#include <cstdint>
#include <string>

#include "common/math_precision.h"
#include "runspec/loss_scale_config.h"

namespace gantry {

enum class WireDtype { kFp32, kBf16 };

struct InjectInf {
  int64_t step = 0;  // 1-based step of each batch size's run; 0: off
  int rank = 0;      // the rank whose local gradient gets the inf (before the all-reduce)
  bool g = true;     // into G's gradient
  bool d = true;     // into D's gradient
  bool active() const { return step > 0; }
  bool operator==(const InjectInf&) const = default;
};

struct MixedPrecision {
  MathPrecision precision = MathPrecision::kFp32;
  LossScaleConfig loss_scale;  // mode kNone: plain fp32 steps
  WireDtype allreduce_dtype = WireDtype::kFp32;
  InjectInf inject_inf;
  bool operator==(const MixedPrecision&) const = default;
};

// "fp32" | "bf16" | "fp16".
std::string PrecisionName(MathPrecision precision);
// "fp32" | "bf16".
std::string WireDtypeName(WireDtype dtype);
// For log lines and reports: "fp32", or e.g. "bf16, dynamic loss scaling, bf16 all-reduce"
// (the parts that differ from a plain fp32 run; the wire only with world_size > 1).
std::string DescribePrecision(const MixedPrecision& mixed, int world_size);

}  // namespace gantry
