#include "worker/optim/flat_parameters.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// Lays entries out back to back; returns the total element count.
int64_t LayOut(const std::vector<ParamSpec>& specs, const std::string& prefix, int64_t offset,
               std::vector<FlatParameters::Entry>* entries) {
  for (const ParamSpec& spec : specs) {
    entries->push_back({absl::StrCat(prefix, spec.name), offset, spec});
    offset += spec.shape.numel();
  }
  return offset;
}

std::vector<Tensor> Views(const Tensor& flat, const std::vector<FlatParameters::Entry>& entries,
                          size_t first, size_t count) {
  std::vector<Tensor> views;
  for (size_t i = first; i < first + count; ++i) {
    views.push_back(flat.ViewAt(entries[i].offset, entries[i].spec.shape));
  }
  return views;
}

void FillInit(const Tensor& t, const ParamSpec& spec, InitScheme scheme, Rng& rng) {
  float* p = t.data();
  const int64_t n = t.numel();
  switch (spec.init) {
    case Init::kZeros: t.Fill(0.0f); return;
    case Init::kOnes: t.Fill(1.0f); return;
    case Init::kNormal002:
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(0.02 * rng.Normal());
      return;
    case Init::kGlorotUniform:
      if (scheme == InitScheme::kNormal002) {
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(0.02 * rng.Normal());
        return;
      }
      const double limit = std::sqrt(6.0 / static_cast<double>(spec.fan_in + spec.fan_out));
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>((2.0 * rng.Uniform() - 1.0) * limit);
      return;
  }
}

}  // namespace

FlatParameters::FlatParameters(std::span<Layer* const> layers, Device device) {
  int64_t num_params = 0;
  int64_t num_buffers = 0;
  std::vector<std::pair<size_t, size_t>> param_ranges, buffer_ranges;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string prefix = absl::StrCat(i, ".", layers[i]->name(), ".");
    const size_t p0 = param_entries_.size(), b0 = buffer_entries_.size();
    layer_param_offsets_.push_back(num_params);
    num_params = LayOut(layers[i]->ParamSpecs(), prefix, num_params, &param_entries_);
    num_buffers = LayOut(layers[i]->BufferSpecs(), prefix, num_buffers, &buffer_entries_);
    param_ranges.emplace_back(p0, param_entries_.size() - p0);
    buffer_ranges.emplace_back(b0, buffer_entries_.size() - b0);
  }
  layer_param_offsets_.push_back(num_params);
  params_ = Tensor::Zeros(Shape{num_params}, DType::kF32, device);
  grads_ = Tensor::Zeros(Shape{num_params}, DType::kF32, device);
  buffers_ = Tensor::Zeros(Shape{num_buffers}, DType::kF32, device);
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto [p0, pn] = param_ranges[i];
    const auto [b0, bn] = buffer_ranges[i];
    if (pn > 0) {
      layers[i]->BindParams(Views(params_, param_entries_, p0, pn), Views(grads_, param_entries_, p0, pn));
    }
    if (bn > 0) layers[i]->BindBuffers(Views(buffers_, buffer_entries_, b0, bn));
  }
}

void FlatParameters::Initialize(InitScheme scheme, Rng& rng) {
  const Tensor params = params_.On(Device::kCpu), buffers = buffers_.On(Device::kCpu);
  for (const Entry& e : param_entries_) FillInit(params.ViewAt(e.offset, e.spec.shape), e.spec, scheme, rng);
  for (const Entry& e : buffer_entries_) FillInit(buffers.ViewAt(e.offset, e.spec.shape), e.spec, scheme, rng);
  params_.CopyFrom(params);
  buffers_.CopyFrom(buffers);
}

void FlatParameters::ZeroGrads() const { grads_.Fill(0.0f); }

}  // namespace gantry
