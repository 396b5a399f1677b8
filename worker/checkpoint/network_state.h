// A network's flat buffers to and from the NetworkState a checkpoint holds.
#pragma once

#include "absl/status/status.h"
#include "worker/checkpoint/training_state.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

// The layout of a flat buffer, as a checkpoint records it.
std::vector<LayoutEntry> LayoutOf(const std::vector<FlatParameters::Entry>& entries);

// The parameters and buffers of `p` (copied to host memory) with their layouts.
NetworkState CaptureNetwork(FlatParameters& p);
// Values laid out as `p`'s (a weight average of it), copied to host memory, with `p`'s
// layouts.
NetworkState CaptureNetworkValues(const FlatParameters& p, const Tensor& params, const Tensor& buffers);

// Puts `saved` into `p` (on whatever device `p` lives). INTERNAL naming `network` when
// the sizes differ: a caller checks layouts first (CheckMatchesRun), so a mismatch here
// is a bug, not bad input.
absl::Status LoadNetwork(const NetworkState& saved, const char* network, FlatParameters& p);

}  // namespace gantry
