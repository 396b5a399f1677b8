// What `gantry-worker generate` feeds the generator: latent vectors for an image model
// (drawn from a seed, read from a .npy file, or a walk between two of them), or
// condition frames for a next-frame model (a .npy file or frames of a flow case).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/models/gan_model.h"
#include "worker/tensor/tensor.h"

namespace gantry {

// A --count left out (0 and negative counts are refused).
inline constexpr int64_t kNotGiven = -1;

struct LatentRequest {
  int64_t count = kNotGiven;  // --count
  uint64_t seed = 1;        // --seed: the noise of sample i is row i of the model's draw from Rng(seed)
  std::string noise_file;   // --noise-file: .npy of [N, noise_dim] (or [noise_dim]) latent vectors
  std::string interpolate;  // --interpolate "A,B": a walk from latent row A to row B
  int64_t steps = 0;        // --steps: points of the walk, both ends included
};

// [K, noise_dim] host rows for `model` (whose SampleInputs draws its noise):
//   - seeded: --count rows of the model's draw from Rng(--seed), as training draws them;
//   - --noise-file: the file's rows (--count, when given, must equal them);
//   - --interpolate A,B: --steps points on the great circle from row A to row B of the
//     rows above (spherical interpolation keeps a Gaussian latent's norm, which a
//     straight line would shrink mid-way; nearly parallel ends are joined linearly).
// INVALID_ARGUMENT naming the flag and the fix for a count below 1 or above
// `max_count`, a file of another width, rows A or B past the source, --steps below 2,
// or --steps or --interpolate given alone.
absl::StatusOr<Tensor> LatentInputs(const GanModel& model, const LatentRequest& request, int64_t max_count);

struct ConditionRequest {
  int64_t count = kNotGiven;   // --count
  std::string condition_file;  // --condition: .npy of [4, S, S] or [N, 4, S, S], as the model sees them
  std::string case_dir;        // --case: a flow case folder (make-flow)
  int64_t frame = 0;           // --frame: the case's first condition frame
};

// [K, 4, S, S] host conditions for a next-frame model of side `image_size`: the file's
// frames, or --count (default 1) consecutive frames of the case from --frame,
// normalised as training normalises them, with the case's obstacle mask as channel 3,
// cut to the centre S x S window of a larger field. INVALID_ARGUMENT naming the flag
// and the fix: neither or both sources, a file of another side than the model's or a
// smaller field, frames past the case's end, a count below 1 or above `max_count`.
absl::StatusOr<Tensor> ConditionInputs(int64_t image_size, const ConditionRequest& request, int64_t max_count);

}  // namespace gantry
