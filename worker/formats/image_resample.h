// Resampling weights for the images make-dataset packs: the Catmull-Rom cubic (Keys'
// cubic with a = -0.5), antialiased on downscale the way PIL's resample does it (the
// same construction as PIL's Image.BICUBIC): the kernel's support, 2 samples, is
// widened by the scale factor when shrinking, so every input pixel contributes, and the
// weights of each output sample are normalised to sum to 1.
//
// Why this filter: it is interpolating (a sample at an input pixel's centre gives that
// pixel exactly, so an image already at the target size comes through unchanged), sharp
// (PIL's and OpenCV's default cubic), with 4 taps at scale 1 against Lanczos-3's 6, and
// with less ringing than Lanczos-3 on the hard edges of drawings and text. Its name in
// the packed file's header is kResampleFilterName.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

inline constexpr char kResampleFilterName[] = "catmull-rom";

// The Catmull-Rom kernel: (a+2)|x|^3 - (a+3)|x|^2 + 1 for |x| <= 1, a|x|^3 - 5a|x|^2 +
// 8a|x| - 4a for 1 < |x| < 2, else 0, with a = -0.5.
double CatmullRom(double x);

// For output samples [begin, end) of an axis resized from in_size to out_size samples
// (sample i's centre at i + 0.5, in units of its own axis): output sample i is
// sum over k < count[j] of weights[j * stride + k] * input[first[j] + k], j = i - begin.
struct ResampleTaps {
  int64_t begin = 0;
  int64_t stride = 0;  // the most taps of any sample
  std::vector<int64_t> first;
  std::vector<int64_t> count;
  std::vector<float> weights;
};

// Requires 0 <= begin <= end <= out_size and in_size, out_size >= 1.
ResampleTaps ComputeResampleTaps(int64_t in_size, int64_t out_size, int64_t begin, int64_t end);

}  // namespace gantry
