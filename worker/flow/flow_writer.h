// A case folder as the flow contract (notes/flow-contract.md) defines it:
//   frames.npy  float32 [T, 3, NY, NX]: ux, uy, vorticity in lattice units
//   mask.npy    float32 [NY, NX]: 1 inside the obstacle
//   flow.json   every parameter, the normalisation constants and the measured Strouhal
// Each file appears atomically (temporary name, fsync, rename) and flow.json comes
// last, so a folder with flow.json is complete and a killed run leaves no half file.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "worker/flow/flow_params.h"
#include "worker/flow/simulation.h"

namespace gantry::flow {

// flow.json's text for a finished case.
std::string FlowJson(const FlowSetup& setup, const FlowResult& result);

// Creates `dir` (and its parents) and writes the three files.
absl::Status WriteFlowCase(const std::string& dir, const FlowSetup& setup, const FlowResult& result);

}  // namespace gantry::flow
