#include "worker/models/torch_names.h"

#include "absl/strings/match.h"

namespace gantry {

const char* GanNetworkName(GanNetwork network) {
  return network == GanNetwork::kGenerator ? "generator" : "discriminator";
}

std::vector<std::string> BatchCounterNames(const TorchNames& names) {
  const std::string kMean = ".running_mean";
  std::vector<std::string> counters;
  for (const std::string& b : names.buffers) {
    if (absl::EndsWith(b, kMean)) counters.push_back(b.substr(0, b.size() - kMean.size()) + ".num_batches_tracked");
  }
  return counters;
}

}  // namespace gantry
