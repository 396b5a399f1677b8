// An exponential moving average of a network's weights (--g-ema): the generator that
// makes a run's samples, quality scores and exported model when the live generator
// oscillates, as it does at large batches (docs/large-batches.md). After the network's
// optimizer step t (1-based),
//   average <- d_t * average + (1 - d_t) * live,   d_t = min(decay, (1 + t) / (10 + t)),
// over the flat parameters and the BatchNorm buffers alike (the running statistics the
// averaged weights are evaluated with). The ramp of d_t (as TensorFlow's
// ExponentialMovingAverage with num_updates) lets the average follow the live weights
// early on, so a short run's average is not held back by the initial draw.
//
// The average lives on the network's device and is updated there by the backend's
// Scale and Axpy; it is state of the run (checkpoints hold it, so a resumed run ends
// with the same average).
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/backend.h"

namespace gantry {

class WeightAverage {
 public:
  // The decay used after step `step` (1-based) for the configured `decay` in [0, 1).
  static double DecayAt(double decay, int64_t step);

  // An average equal to `live`'s current values (not owned; must outlive this object).
  WeightAverage(double decay, FlatParameters& live, Backend& backend);

  // Folds `live`'s values after its optimizer step `step` (1-based) into the average.
  void Update(int64_t step);

  const Tensor& params() const { return params_; }
  const Tensor& buffers() const { return buffers_; }

  // Replaces the average with saved values (host memory). INVALID_ARGUMENT when their
  // sizes are not the network's.
  absl::Status Restore(std::span<const float> params, std::span<const float> buffers);

  // While alive, `live` holds the average (the live values are kept aside and put back
  // on destruction): for drawing samples from the averaged network.
  class Swapped {
   public:
    explicit Swapped(WeightAverage& average);
    ~Swapped();
    Swapped(const Swapped&) = delete;
    Swapped& operator=(const Swapped&) = delete;

   private:
    WeightAverage& average_;
    Tensor kept_params_, kept_buffers_;
  };

 private:
  double decay_;
  FlatParameters& live_;
  Backend& backend_;
  Tensor params_, buffers_;
};

}  // namespace gantry
