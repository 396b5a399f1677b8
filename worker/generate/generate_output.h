// The output folder of `gantry-worker generate`: a new folder (or an empty one), filled
// under a temporary name beside it and renamed into place once complete, so it never
// holds part of a result and nothing already there is replaced.
//
// Contents (docs/export.md): sample-00000.png ... (one per sample, in colour for a colour
// image model; a next-frame model's three channels side by side), grid.png (the first kGridImages samples of an image
// model, or kGridFrames of a next-frame model, one per row), samples.npy ([K, C, H, W]
// float32, the generator's outputs as they are: tanh, in [-1, 1]), inputs.npy (the
// generator's inputs, [K, ...]: what to feed a PyTorch twin to compare) and
// generate.json (what was generated from what).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/tensor/tensor.h"

namespace gantry {

inline constexpr int64_t kGridImages = 256;
inline constexpr int64_t kGridFrames = 16;

class GenerateOutput {
 public:
  // Checks `out` (absent, or an empty folder; created with its parents) and creates the
  // staging folder beside it. INVALID_ARGUMENT naming --out and the fix when it is a
  // file, a folder with something in it, or cannot be created.
  static absl::StatusOr<GenerateOutput> Prepare(const std::string& out);

  GenerateOutput(GenerateOutput&& other) noexcept;
  GenerateOutput& operator=(GenerateOutput&&) = delete;
  // Removes the staging folder unless published.
  ~GenerateOutput();

  const std::string& out() const { return out_; }
  const std::string& staging() const { return staging_; }
  // Renames the staging folder to `out` (refused if something appeared there meanwhile).
  absl::Status Publish();

 private:
  GenerateOutput(std::string out, std::string staging) : out_(std::move(out)), staging_(std::move(staging)) {}
  std::string out_, staging_;
  bool published_ = false;
};

// The generator's outputs: `samples` holds K x C x H x W floats.
struct GeneratedSamples {
  Tensor inputs;                     // [K, ...]
  std::vector<float> samples;
  std::vector<int64_t> sample_shape; // {C, H, W}
  // An image model's samples are pictures whose C channels are colours (1 grey, 3 RGB;
  // 2, 4 with alpha): each PNG is in colour. Else (a next-frame model) the channels are
  // fields, drawn side by side in grey.
  bool colour_images = false;
};

// Writes the files of the top comment but generate.json (`info_json` goes there) into
// `folder`. `before_sample` (when set) is called with the sample's index before each
// sample's PNG; an error from it ends the writing with that error (a stop: CANCELLED).
absl::Status WriteGeneratedFiles(const std::string& folder, const GeneratedSamples& generated,
                                 const std::string& info_json,
                                 const std::function<absl::Status(int64_t)>& before_sample = nullptr);

}  // namespace gantry
