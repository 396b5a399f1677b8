// The PyTorch twin of a gantry network: the state_dict keys of the equivalent module
// (bench/torch/dcgan_model.py, bench/torch/pix2pix_model.py), so a network can be
// exported to and loaded from files that PyTorch code reads and writes (docs/export.md).
#pragma once

#include <string>
#include <vector>

namespace gantry {

enum class GanNetwork { kGenerator, kDiscriminator };

// "generator" | "discriminator".
const char* GanNetworkName(GanNetwork network);

// One key per entry of the network's flat buffers, in their order
// (FlatParameters::param_entries() and buffer_entries()); the module's parameters()
// and buffers() come in the same order, with the same shapes. A BatchNorm's running
// statistics are "<module>.running_mean" and "<module>.running_var"; PyTorch keeps a
// "<module>.num_batches_tracked" counter beside them, which gantry has no use for.
struct TorchNames {
  std::vector<std::string> params;
  std::vector<std::string> buffers;
  bool empty() const { return params.empty() && buffers.empty(); }
};

// "<prefix>.num_batches_tracked" for every "<prefix>.running_mean" of `names`.
std::vector<std::string> BatchCounterNames(const TorchNames& names);

}  // namespace gantry
