// A gantry network as the state_dict of its PyTorch twin in a safetensors file, and
// back (docs/export.md): what `gantry-worker export` writes and `train --init-from` reads.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/formats/safetensors.h"
#include "worker/models/torch_names.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

// The tensors of `p` (any device) under `names`, in the flat buffers' order, as `dtype`
// (kF32, or kBf16: rounded to nearest even), then each BatchNorm's num_batches_tracked
// counter (an I64 scalar holding `batches_tracked`), so that PyTorch's
// load_state_dict(strict=True) takes the file. INVALID_ARGUMENT when `names` does not
// give one key per entry (a model without a PyTorch twin) or `dtype` is another type.
absl::StatusOr<StFile> NetworkToSafetensors(const FlatParameters& p, const TorchNames& names, StDtype dtype,
                                            int64_t batches_tracked);

// Whether the file's tensor names are exactly `names`' (counters aside): which network
// of a model a file holds.
bool HoldsNetwork(const StFile& file, const TorchNames& names);

// Puts the file's tensors into `p`, converting F64, F16 and BF16 values to fp32. Every
// key of `names` must be there with the entry's shape (a PyTorch Linear's [out, in],
// a convolution's [out, in, k, k], a transposed one's [in, out, k, k]); counters are
// ignored. INVALID_ARGUMENT starting with `path` and naming the key for a missing or
// unexpected tensor, a shape or dtype that does not fit, a value that is not finite, a
// negative BatchNorm running variance, or a weight past +-1e4 (a statistic past +-1e8);
// tensor names are quoted through NameForMessage (common/printable_text.h);
// `p` is left as it was then.
absl::Status LoadSafetensorsIntoNetwork(const StFile& file, const std::string& path, const TorchNames& names,
                                        FlatParameters& p);

}  // namespace gantry
