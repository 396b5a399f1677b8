#include "worker/optim/optimizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/optim/adam.h"
#include "worker/optim/sgd.h"

namespace gantry {

absl::Status Optimizer::RestoreState(const std::vector<std::vector<float>>& buffers, int64_t steps_taken) {
  const std::vector<Tensor> mine = state();
  if (buffers.size() != mine.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name(), " optimizer: the saved state has ", buffers.size(),
                                                   " buffer(s), this optimizer has ", mine.size()));
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    if (static_cast<int64_t>(buffers[i].size()) != mine[i].numel()) {
      return absl::InvalidArgumentError(absl::StrCat(name(), " optimizer: saved state buffer ", i, " holds ",
                                                     buffers[i].size(), " values, this optimizer's holds ",
                                                     mine[i].numel()));
    }
  }
  if (steps_taken < 0) {
    return absl::InvalidArgumentError(absl::StrCat(name(), " optimizer: negative step count ", steps_taken));
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    mine[i].CopyFrom(Tensor::FromVector(mine[i].shape(), buffers[i]));
  }
  set_steps_taken(steps_taken);
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::unique_ptr<Optimizer>> MakeUnwarmed(const OptimizerConfig& c, int64_t size, Device device) {
  if (!(c.lr > 0.0f)) return absl::InvalidArgumentError(absl::StrCat("lr: must be > 0, got ", c.lr));
  if (c.kind == "adam") {
    if (!(c.beta1 >= 0.0f && c.beta1 < 1.0f) || !(c.beta2 >= 0.0f && c.beta2 < 1.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("adam betas must lie in [0, 1), got beta1=", c.beta1, " beta2=", c.beta2));
    }
    if (!(c.eps > 0.0f)) return absl::InvalidArgumentError(absl::StrCat("adam eps: must be > 0, got ", c.eps));
    return std::make_unique<Adam>(AdamConfig{c.lr, c.beta1, c.beta2, c.eps}, size, device);
  }
  if (c.kind == "sgd") {
    if (!(c.momentum >= 0.0f && c.momentum < 1.0f)) {
      return absl::InvalidArgumentError(absl::StrCat("sgd momentum must lie in [0, 1), got ", c.momentum));
    }
    return std::make_unique<Sgd>(c.lr, c.momentum, size, device);
  }
  return absl::InvalidArgumentError(absl::StrCat("optimizer: unknown kind '", c.kind, "' (use adam or sgd)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& c, int64_t size, Device device,
                                                         const LearningRateRule& warmup) {
  if (warmup.warmup_steps < 0 || !(warmup.warmup_start > 0.0 && warmup.warmup_start <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("warm-up: steps must be >= 0 and the start fraction in (0, 1], got ",
                                                   warmup.warmup_steps, " and ", warmup.warmup_start));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, MakeUnwarmed(c, size, device));
  optimizer->set_warmup(warmup);
  return optimizer;
}

}  // namespace gantry
