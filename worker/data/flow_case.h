// One simulated flow case as `gantry-worker make-flow` writes it (the flow contract,
// issue 13): DIR/frames.npy float32 [T, 3, NY, NX] holding (ux, uy, vorticity) in
// lattice units, DIR/mask.npy float32 [NY, NX] (1 inside the obstacle, 0 in fluid) and
// DIR/flow.json with the simulation's parameters and the normalisation constants.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// The three channels of a flow frame, in storage order.
inline constexpr int kFlowChannels = 3;  // ux, uy, vorticity
const std::array<const char*, kFlowChannels>& FlowChannelNames();

// normalised = (value - offset) / scale, per channel; scale > 0. The generator chooses
// the constants so normalised values lie in about [-1, 1] (the tanh range).
struct FlowNormalisation {
  std::array<float, kFlowChannels> offset{};
  std::array<float, kFlowChannels> scale{1, 1, 1};
};

// What rollout metrics need from flow.json; absent keys stay unset.
struct FlowCaseInfo {
  std::optional<double> diameter;    // obstacle diameter in lattice cells
  std::optional<double> u_lattice;   // inlet speed in lattice units
  std::optional<int64_t> every;      // lattice steps between recorded frames
  std::optional<double> strouhal;    // measured by the generator from its wake probe
  std::optional<int64_t> probe_x;    // the wake probe's cell
  std::optional<int64_t> probe_y;
  std::optional<double> re;
};

struct FlowCase {
  std::string dir;
  int64_t frames = 0;
  int64_t ny = 0;
  int64_t nx = 0;
  std::vector<float> fields;  // [frames, 3, ny, nx], physical units as simulated
  std::vector<float> mask;    // [ny, nx]
  FlowNormalisation norm;
  FlowCaseInfo info;

  int64_t plane() const { return ny * nx; }
  int64_t frame_numel() const { return kFlowChannels * plane(); }
  const float* frame(int64_t t) const { return fields.data() + t * frame_numel(); }
};

// Reads the case in `dir`. Every failure is INVALID_ARGUMENT (bad input: exit 2) with a
// message that names the file and the fix: a missing file, a frames array that is not
// 4-D [T, 3, NY, NX] float32 (float64 is narrowed), a mask that is not [NY, NX], a
// flow.json that is missing, not JSON, lacks "normalisation" (each channel's offset and
// a positive scale) or whose nx/ny/frames contradict the arrays, and NaN or Inf in
// either array (named by the first bad index).
absl::StatusOr<FlowCase> LoadFlowCase(const std::string& dir);

// The case folders of a data root (--data-dir with --dataset flow): `root` itself when
// it holds frames.npy, else its immediate sub-folders holding frames.npy, sorted by
// name. INVALID_ARGUMENT when `root` is not a folder or holds no case.
absl::StatusOr<std::vector<std::string>> FindFlowCases(const std::string& root);

// Writes the normalised frame `t` of `c` (3 planes) to `out` (frame_numel() floats).
void NormaliseFrame(const FlowCase& c, int64_t t, float* out);

// Inverse of the normalisation for a whole frame in place: physical = n * scale + offset.
void DenormaliseFrame(const FlowNormalisation& norm, int64_t plane, float* frame);

}  // namespace gantry
