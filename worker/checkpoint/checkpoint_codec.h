// TrainingState <-> checkpoint file bytes (the container is checkpoint_format.h; one
// section per part of the state). Decoding checks the container and that every section
// is complete and self-consistent; whether the state fits a given run is
// checkpoint_match.h's question.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/checkpoint/training_state.h"

namespace gantry {

std::vector<uint8_t> EncodeCheckpoint(const TrainingState& state);

// `name` (the file) starts every error message. DATA_LOSS for a corrupt, torn or
// incomplete file; FAILED_PRECONDITION for another format version.
absl::StatusOr<TrainingState> DecodeCheckpoint(std::span<const uint8_t> file, const std::string& name);

}  // namespace gantry
