#include "worker/optim/weight_average.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// average <- d * average + (1 - d) * live, on the tensors' device.
void Blend(Backend& backend, double d, const Tensor& live, const Tensor& average) {
  if (average.numel() == 0) return;
  backend.Scale(average.numel(), static_cast<float>(d), average.data());
  backend.Axpy(average.numel(), static_cast<float>(1.0 - d), live.data(), average.data());
}

}  // namespace

double WeightAverage::DecayAt(double decay, int64_t step) {
  const double ramp = (1.0 + static_cast<double>(step)) / (10.0 + static_cast<double>(step));
  return std::min(decay, ramp);
}

WeightAverage::WeightAverage(double decay, FlatParameters& live, Backend& backend)
    : decay_(decay), live_(live), backend_(backend), params_(live.params().Clone()),
      buffers_(live.buffers().Clone()) {}

void WeightAverage::Update(int64_t step) {
  const double d = DecayAt(decay_, step);
  Blend(backend_, d, live_.params(), params_);
  Blend(backend_, d, live_.buffers(), buffers_);
}

absl::Status WeightAverage::Restore(std::span<const float> params, std::span<const float> buffers) {
  if (static_cast<int64_t>(params.size()) != params_.numel() ||
      static_cast<int64_t>(buffers.size()) != buffers_.numel()) {
    return absl::InvalidArgumentError(absl::StrCat("the saved weight average holds ", params.size(),
                                                   " parameters and ", buffers.size(),
                                                   " buffer values; the network has ", params_.numel(), " and ",
                                                   buffers_.numel()));
  }
  params_.CopyFrom(Tensor::FromVector(params_.shape(), {params.begin(), params.end()}));
  buffers_.CopyFrom(Tensor::FromVector(buffers_.shape(), {buffers.begin(), buffers.end()}));
  return absl::OkStatus();
}

WeightAverage::Swapped::Swapped(WeightAverage& average)
    : average_(average),
      kept_params_(average.live_.params().Clone()),
      kept_buffers_(average.live_.buffers().Clone()) {
  average_.live_.params().CopyFrom(average_.params_);
  average_.live_.buffers().CopyFrom(average_.buffers_);
}

WeightAverage::Swapped::~Swapped() {
  average_.live_.params().CopyFrom(kept_params_);
  average_.live_.buffers().CopyFrom(kept_buffers_);
}

}  // namespace gantry
