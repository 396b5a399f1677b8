// An optimizer updates one network's flat parameter buffer from its flat gradient
// buffer. Its state (moments, momentum, step count) lives in flat buffers of the same
// size, so checkpoints and future sharded optimizers see one array each.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runspec/learning_rate_rule.h"
#include "runspec/optimizer_config.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/tensor.h"

namespace gantry {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  // params -= update(grads); both are flat buffers of the size given at construction.
  virtual void Step(Backend& backend, const Tensor& params, const Tensor& grads) = 0;
  virtual int64_t steps_taken() const = 0;
  // The optimizer's state buffers (for checkpoints), in a fixed order. They are views:
  // writing into them changes the optimizer's state.
  virtual std::vector<Tensor> state() const = 0;

  // Puts back a state saved from state() and steps_taken() (a checkpoint's), so the
  // next Step() does exactly what it would have done in the run that saved it.
  // INVALID_ARGUMENT, naming the difference, when `buffers` is not as many buffers of the
  // same sizes as state(); the optimizer is then unchanged.
  absl::Status RestoreState(const std::vector<std::vector<float>>& buffers, int64_t steps_taken);

  // The warm-up of `rule` (its warmup_steps and warmup_start; its scaling is the caller's,
  // already in the configured rate). Default: none.
  void set_warmup(const LearningRateRule& rule) { warmup_ = rule; }

 protected:
  virtual void set_steps_taken(int64_t steps) = 0;
  // The rate of the next step for the configured rate `lr`: a function of steps_taken(),
  // so a restored optimizer continues the warm-up where the saved one was.
  float RateOfNextStep(float lr) const { return static_cast<float>(WarmedUpRate(lr, warmup_, steps_taken())); }

 private:
  LearningRateRule warmup_;
};

// An optimizer for a flat buffer of `size` elements on `device` that warms up as `warmup`
// says, or INVALID_ARGUMENT naming the bad field.
absl::StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config, int64_t size,
                                                         Device device = Device::kCpu,
                                                         const LearningRateRule& warmup = {});

}  // namespace gantry
