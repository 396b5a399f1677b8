// What a run will hold in memory, estimated from its settings alone (no engine, no
// allocation), so a run that cannot fit is refused by name before anything is allocated:
// the networks' parameters with their gradients and optimizer state, and the activations
// one rank keeps for its share of a batch. The formulas follow the architectures in
// worker/models/ (dcgan.cc, unet.cc, pix2pix.cc); they are estimates, within a small factor
// of what a run measures (peak_rss_mb in epochs.csv), which is all a refusal needs: the
// sizes it refuses are tens of times what the machine has, not a few percent over.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "runspec/train_config.h"

namespace gantry {

// Parameters of the run's two networks together (G and D).
double ModelParameterCount(const TrainConfig& config);

// Floats the Pix2Pix generator (the U-Net) keeps per sample in a forward pass.
double Pix2pixGeneratorActivationFloats(const Pix2pixConfig& config);

// Floats a training step keeps per sample (both networks, forward and backward).
double TrainActivationFloatsPerSample(const TrainConfig& config);

// Bytes one of `world` ranks needs to train a global batch of `batch` rows.
double TrainBytesPerRank(const TrainConfig& config, int64_t batch, int world);

// OK when the largest batch size of the run fits in `available_bytes` on each rank (0:
// unknown, OK). INVALID_ARGUMENT naming the settings that size it and the fix otherwise.
absl::Status CheckRunFitsMemory(const TrainConfig& config, int world, int64_t available_bytes);

}  // namespace gantry
