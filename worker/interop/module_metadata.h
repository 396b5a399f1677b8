// What a reader needs to rebuild a network's PyTorch twin, written into an exported
// file's __metadata__ (string values; docs/export.md lists the keys).
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "runspec/train_config.h"
#include "worker/models/torch_names.h"

namespace gantry {

// "format": "gantry-state-dict-v1", "model", "network", and the model's settings that
// shape the module, with BatchNorm's momentum in PyTorch's convention (1 - gantry's):
//   dcgan:   noise_dim, leaky_slope, bn_eps, bn_momentum
//   dcgan on --dataset images (the image DCGAN): image_size, channels, noise_dim, ngf,
//            ndf, leaky_slope, bn_eps, bn_momentum (image_size tells it from the above)
//   pix2pix: image_size, ngf, ndf, norm, predict, leaky_slope, dropout, bn_eps,
//            bn_momentum, in_eps, in_channels, out_channels
std::map<std::string, std::string> TorchModuleMetadata(const TrainConfig& config, GanNetwork network);

// A file's metadata against the run it is to start: OK when it names no model, or the
// run's; INVALID_ARGUMENT naming `path` otherwise.
absl::Status CheckMetadataFitsModel(const std::map<std::string, std::string>& metadata, const std::string& path,
                                    const std::string& model);

}  // namespace gantry
