#include "worker/data/flow_pairs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

struct Crop {
  int case_index;
  int64_t t;
  int64_t y;
  int64_t x;
};

absl::Status CheckFits(const FlowCase& c, int64_t s) {
  if (s <= c.ny && s <= c.nx) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--image-size ", s, " is larger than the ", c.ny, "x", c.nx, " (NYxNX) field of ", c.dir,
      "; use an --image-size the model takes that is <= ", std::min(c.ny, c.nx),
      ", or simulate a larger field (make-flow --nx/--ny)"));
}

// Channel block of `frame` cropped at (y, x), normalised, into `out` (3 planes S x S).
void CropNormalised(const FlowCase& c, int64_t t, int64_t y, int64_t x, int64_t s, float* out) {
  const float* frame = c.frame(t);
  for (int ch = 0; ch < kFlowChannels; ++ch) {
    const float offset = c.norm.offset[ch];
    const float inv = 1.0f / c.norm.scale[ch];
    const float* plane = frame + ch * c.plane();
    for (int64_t r = 0; r < s; ++r) {
      const float* src = plane + (y + r) * c.nx + x;
      float* dst = out + (ch * s + r) * s;
      for (int64_t k = 0; k < s; ++k) dst[k] = (src[k] - offset) * inv;
    }
  }
}

// Adds N(0, sigma^2) to `count` values.
void AddNoise(Rng& rng, float sigma, int64_t count, float* values) {
  for (int64_t i = 0; i < count; ++i) values[i] += sigma * static_cast<float>(rng.Normal());
}

void CropMask(const FlowCase& c, int64_t y, int64_t x, int64_t s, float* out) {
  for (int64_t r = 0; r < s; ++r) std::copy_n(c.mask.data() + (y + r) * c.nx + x, s, out + r * s);
}

}  // namespace

absl::StatusOr<ImageDataset> MakeFlowPairs(const std::vector<FlowCase>& cases,
                                           const std::vector<FlowPairRange>& ranges, const FlowPairOptions& options) {
  const int64_t s = options.image_size;
  if (options.unroll < 1) return absl::InvalidArgumentError(absl::StrCat("--unroll ", options.unroll, ": must be >= 1"));
  if (s < 1) return absl::InvalidArgumentError(absl::StrCat("--image-size ", s, ": must be positive"));
  if (!(options.input_noise >= 0.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("--input-noise ", options.input_noise, ": must be >= 0"));
  }
  Rng rng(Mix64(options.seed ^ 0x666c6f77ull));  // "flow": a stream of its own
  std::vector<Crop> crops;
  for (const FlowPairRange& range : ranges) {
    const FlowCase& c = cases.at(range.case_index);
    if (absl::Status fits = CheckFits(c, s); !fits.ok()) return fits;
    const int64_t span = options.unroll * options.horizon;  // from the input to the window's last frame
    if (range.first_t < 0 || range.end_t + span > c.frames) {
      return absl::InternalError(absl::StrCat("pair range [", range.first_t, ", ", range.end_t, ") + ", span,
                                              " outside the ", c.frames, " frames of ", c.dir));
    }
    const int64_t per_pair = options.crops_per_pair > 0 ? options.crops_per_pair : (c.ny * c.nx + s * s - 1) / (s * s);
    for (int64_t t = range.first_t; t < range.end_t; ++t) {
      for (int64_t k = 0; k < per_pair; ++k) {
        const auto y = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(c.ny - s + 1)));
        const auto x = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(c.nx - s + 1)));
        crops.push_back({range.case_index, t, y, x});
      }
    }
  }
  for (size_t i = crops.size(); i > 1; --i) std::swap(crops[i - 1], crops[rng.Below(i)]);  // Fisher-Yates
  if (options.max_rows > 0 && static_cast<size_t>(options.max_rows) < crops.size()) crops.resize(options.max_rows);

  ImageDataset out;
  out.count = static_cast<int64_t>(crops.size());
  out.channels = FlowWindowChannels(options.unroll);
  out.height = s;
  out.width = s;
  out.images_path = cases.empty() ? "" : cases.front().dir + "/frames.npy";
  out.labels.assign(crops.size(), 0);
  out.pixels.resize(static_cast<size_t>(out.count * out.sample_numel()));
  const int64_t plane = s * s;
  Rng noise_rng(Mix64(options.seed ^ 0x6e6f697365ull));  // "noise"
  for (size_t i = 0; i < crops.size(); ++i) {
    const Crop& k = crops[i];
    const FlowCase& c = cases[k.case_index];
    float* row = out.pixels.data() + i * out.sample_numel();
    CropNormalised(c, k.t, k.y, k.x, s, row);
    if (options.input_noise > 0.0f) AddNoise(noise_rng, options.input_noise, kFlowChannels * plane, row);
    CropMask(c, k.y, k.x, s, row + kFlowChannels * plane);
    for (int64_t step = 1; step <= options.unroll; ++step) {
      float* target = row + FlowWindowChannels(step - 1) * plane;
      CropNormalised(c, k.t + step * options.horizon, k.y, k.x, s, target);
    }
  }
  return out;
}

}  // namespace gantry
