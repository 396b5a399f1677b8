#include "worker/checkpoint/network_state.h"

#include "absl/strings/str_cat.h"

namespace gantry {

std::vector<LayoutEntry> LayoutOf(const std::vector<FlatParameters::Entry>& entries) {
  std::vector<LayoutEntry> layout;
  for (const FlatParameters::Entry& e : entries) layout.push_back({e.name, e.spec.shape.dims()});
  return layout;
}

NetworkState CaptureNetworkValues(const FlatParameters& p, const Tensor& params, const Tensor& buffers) {
  const Tensor host_params = params.On(Device::kCpu);
  const Tensor host_buffers = buffers.On(Device::kCpu);
  return NetworkState{LayoutOf(p.param_entries()), LayoutOf(p.buffer_entries()),
                      std::vector<float>(host_params.data(), host_params.data() + host_params.numel()),
                      std::vector<float>(host_buffers.data(), host_buffers.data() + host_buffers.numel())};
}

NetworkState CaptureNetwork(FlatParameters& p) { return CaptureNetworkValues(p, p.params(), p.buffers()); }

absl::Status LoadNetwork(const NetworkState& saved, const char* network, FlatParameters& p) {
  if (static_cast<int64_t>(saved.params.size()) != p.params().numel() ||
      static_cast<int64_t>(saved.buffers.size()) != p.buffers().numel()) {
    return absl::InternalError(absl::StrCat("the checkpoint's ", network, " holds ", saved.params.size(),
                                            " parameters and ", saved.buffers.size(), " buffer values; the model has ",
                                            p.params().numel(), " and ", p.buffers().numel()));
  }
  p.params().CopyFrom(Tensor::FromVector(p.params().shape(), saved.params));
  p.buffers().CopyFrom(Tensor::FromVector(p.buffers().shape(), saved.buffers));
  return absl::OkStatus();
}

}  // namespace gantry
