#include "worker/models/torch_names.h"

#include "absl/strings/match.h"

namespace gantry {

std::string_view GanNetworkName(GanNetwork network) {
  return network == GanNetwork::kGenerator ? "generator" : "discriminator";
}

std::vector<std::string> BatchCounterNames(const TorchNames& names) {
  constexpr std::string_view kMean = ".running_mean";
  std::vector<std::string> counters;
  for (const std::string& b : names.buffers) {
    if (absl::EndsWith(b, kMean)) counters.push_back(b.substr(0, b.size() - kMean.size()) + ".num_batches_tracked");
  }
  return counters;
}

}  // namespace gantry
