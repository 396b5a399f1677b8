#include "runspec/precision_settings.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr RealRange kStaticScale{0, kFloatMax, /*lo_open=*/true};

absl::Status SetPrecision(const std::string& n, const std::string& v, TrainConfig& c) {
  RETURN_IF_ERROR(OneOf(n, v, {"fp32", "bf16", "fp16"}));
  c.mixed.precision = v == "bf16" ? MathPrecision::kBf16 : v == "fp16" ? MathPrecision::kFp16 : MathPrecision::kFp32;
  return absl::OkStatus();
}

absl::Status SetLossScale(const std::string& n, const std::string& v, TrainConfig& c) {
  LossScaleConfig& ls = c.mixed.loss_scale;
  if (v == "dynamic" || v == "none") {
    ls.mode = v == "dynamic" ? LossScaleMode::kDynamic : LossScaleMode::kNone;
    return absl::OkStatus();
  }
  const absl::StatusOr<double> scale = ParseRealIn(absl::StrCat("--", n), v, kStaticScale);
  if (!scale.ok()) return Bad(n, v, "dynamic, none, or a positive number for a static scale, e.g. 1024");
  ls.mode = LossScaleMode::kStatic;
  ls.init_scale = static_cast<float>(*scale);
  return absl::OkStatus();
}

absl::Status SetAllReduceDtype(const std::string& n, const std::string& v, TrainConfig& c) {
  RETURN_IF_ERROR(OneOf(n, v, {"fp32", "bf16"}));
  c.mixed.allreduce_dtype = v == "bf16" ? WireDtype::kBf16 : WireDtype::kFp32;
  return absl::OkStatus();
}

absl::Status SetInjectNetwork(const std::string& n, const std::string& v, TrainConfig& c) {
  RETURN_IF_ERROR(OneOf(n, v, {"g", "d", "both"}));
  c.mixed.inject_inf.g = v != "d";
  c.mixed.inject_inf.d = v != "g";
  return absl::OkStatus();
}

// The settings that only dynamic loss scaling reads.
constexpr const char* kDynamicOnly[] = {"loss-scale-init", "loss-scale-growth-interval", "loss-scale-growth-factor",
                                        "loss-scale-backoff-factor"};

// How the run scales its loss, in the words of the settings (a static scale is quoted as
// given: --loss-scale-init, applied after it, shares its field).
std::string DescribeScaling(const RawSettings& given, const LossScaleConfig& ls) {
  if (ls.mode == LossScaleMode::kStatic) return absl::StrCat("a static scale of ", given.at("loss-scale"));
  return LossScaleModeName(ls.mode);
}

}  // namespace

const std::vector<Setting>& PrecisionSettings() {
  static const auto* settings = new std::vector<Setting>{
      {{"precision",
        "number format of the matrix products: fp32 | bf16 | fp16 (mixed precision: master weights, optimizer "
        "state and gradients stay fp32)",
        "fp32"},
       SetPrecision},
      {{"loss-scale",
        "loss scaling per network: dynamic (GradScaler rules) | none | a number (static scale); an inf/NaN "
        "gradient skips that network's step except with none",
        "dynamic for bf16 and fp16, none for fp32", false, "dynamic, none, or " + DescribeRange(kStaticScale)},
       SetLossScale},
      RealSetting({"loss-scale-init", "dynamic loss scaling: the first scale", "65536"}, {0, kFloatMax, true},
                  [](TrainConfig& c, double v) { c.mixed.loss_scale.init_scale = static_cast<float>(v); }),
      IntSetting({"loss-scale-growth-interval", "dynamic loss scaling: clean steps after which the scale grows",
                  "2000"},
                 {1, 1'000'000'000}, [](TrainConfig& c, int64_t v) { c.mixed.loss_scale.growth_interval = v; }),
      RealSetting({"loss-scale-growth-factor", "dynamic loss scaling: factor of each growth (> 1)", "2"},
                  {1, kFloatMax, true}, [](TrainConfig& c, double v) {
                    c.mixed.loss_scale.growth_factor = static_cast<float>(v);
                  }),
      RealSetting({"loss-scale-backoff-factor", "dynamic loss scaling: factor applied when a step is skipped (in "
                   "(0, 1))", "0.5"},
                  {0, 1, true, true}, [](TrainConfig& c, double v) {
                    c.mixed.loss_scale.backoff_factor = static_cast<float>(v);
                  }),
      {{"allreduce-dtype",
        "gradient all-reduce format: fp32 | bf16 (half the bytes; each pair of partial sums added in fp32)",
        "bf16 for bf16 and fp16, fp32 for fp32"},
       SetAllReduceDtype},
  };
  return *settings;
}

const std::vector<Setting>& InjectInfSettings() {
  static const auto* settings = new std::vector<Setting>{
      IntSetting({"debug-inject-inf-step",
                  "DEBUG: put an inf into one rank's gradient at this step of each batch size (1-based; 0: off), to "
                  "show that every rank skips it; needs loss scaling",
                  "0"},
                 {0, kMaxRunSteps}, [](TrainConfig& c, int64_t v) { c.mixed.inject_inf.step = v; }),
      IntSetting({"debug-inject-inf-rank", "DEBUG: the rank whose gradient gets the inf", "0"}, {0, kMaxRank},
                 [](TrainConfig& c, int64_t v) { c.mixed.inject_inf.rank = static_cast<int>(v); }),
      {{"debug-inject-inf-network", "DEBUG: the gradient that gets the inf: g | d | both", "both"}, SetInjectNetwork},
  };
  return *settings;
}

absl::Status FinishPrecisionSettings(const RawSettings& given, MixedPrecision& mixed) {
  const bool reduced = mixed.precision != MathPrecision::kFp32;
  LossScaleConfig& ls = mixed.loss_scale;
  if (!given.contains("loss-scale")) ls.mode = reduced ? LossScaleMode::kDynamic : LossScaleMode::kNone;
  if (!given.contains("allreduce-dtype")) mixed.allreduce_dtype = reduced ? WireDtype::kBf16 : WireDtype::kFp32;
  if (ls.mode != LossScaleMode::kDynamic) {
    for (const char* name : kDynamicOnly) {
      if (!given.contains(name)) continue;
      return absl::InvalidArgumentError(absl::StrCat("--", name,
                                                     " applies to dynamic loss scaling only, but this run has ",
                                                     DescribeScaling(given, ls),
                                                     " (set --loss-scale dynamic, or drop --", name, ")"));
    }
  }
  RETURN_IF_ERROR(ValidateLossScaleConfig(ls));
  if (!mixed.inject_inf.active()) {
    for (const char* name : {"debug-inject-inf-rank", "debug-inject-inf-network"}) {
      if (given.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs --debug-inject-inf-step N (N >= 1)"));
      }
    }
  } else if (ls.mode == LossScaleMode::kNone) {
    return absl::InvalidArgumentError(
        "--debug-inject-inf-step: with --loss-scale none nothing skips the poisoned step; use --loss-scale dynamic "
        "or a static scale");
  }
  return absl::OkStatus();
}

}  // namespace gantry
