#include "runspec/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/machine_memory.h"

namespace gantry {
namespace {

constexpr double kKernel = 16;  // 4x4 convolutions (Pix2Pix)
// Per parameter: the weight, its gradient, two Adam moments and a working copy.
constexpr double kFloatsPerParameter = 5;
// Per activation element: the forward value, what the layer saves for backward, and the
// gradient flowing back.
constexpr double kFloatsPerActivation = 3;

// The U-Net's channels per down block: ngf, 2 ngf, 4 ngf, then 8 ngf (unet.cc).
std::vector<double> DownChannels(const Pix2pixConfig& c) {
  int64_t depth = 0;
  while (depth < Pix2pixConfig::kMaxDepth && (int64_t{2} << depth) <= c.image_size) ++depth;
  std::vector<double> channels;
  for (int64_t i = 0; i < depth; ++i) {
    channels.push_back(static_cast<double>(c.ngf) * static_cast<double>(std::min<int64_t>(int64_t{1} << i, 8)));
  }
  return channels;
}

double UNetParameters(const Pix2pixConfig& c) {
  const std::vector<double> ch = DownChannels(c);
  const size_t n = ch.size();
  double p = 0;
  for (size_t i = 0; i < n; ++i) {
    const double in = i == 0 ? Pix2pixConfig::kInputChannels : ch[i - 1];
    p += in * ch[i] * kKernel + 2 * ch[i];
  }
  for (size_t j = 0; j + 1 < n; ++j) {
    const double in = j == 0 ? ch[n - 1] : 2 * ch[n - 1 - j];
    p += in * ch[n - 2 - j] * kKernel + 2 * ch[n - 2 - j];
  }
  return p + (n <= 1 ? ch.front() : 2 * ch.front()) * Pix2pixConfig::kOutputChannels * kKernel;
}

double PatchGanParameters(const Pix2pixConfig& c) {
  const double f = static_cast<double>(c.ndf);
  const double rows = Pix2pixConfig::kInputChannels + Pix2pixConfig::kOutputChannels;
  return (rows * f + f * 2 * f + 2 * f * 4 * f + 4 * f * 8 * f + 8 * f) * kKernel + 2 * (2 * f + 4 * f + 8 * f);
}

double PatchGanActivationFloats(const Pix2pixConfig& c) {
  const double s = static_cast<double>(c.image_size), f = static_cast<double>(c.ndf);
  const double s8 = s / 8;
  return f * (s / 2) * (s / 2) + 2 * f * (s / 4) * (s / 4) + 4 * f * s8 * s8 + 8 * f * s8 * s8 + s8 * s8;
}

// The DCGAN of the paper's Table 1 (dcgan.cc): its sizes are fixed but for the noise.
double DcganParameters(const DcganConfig& c) {
  const double g = static_cast<double>(c.noise_dim) * 12544 + 2 * 12544 + 256 * 128 * 25 + 2 * 128 +
                   128 * 64 * 25 + 2 * 64 + 64 * 25;
  const double d = 64 * 25 + 64 + 64 * 128 * 25 + 128 + 128 * 49 + 1;
  return g + d;
}

constexpr double kDcganActivationFloats = (12544 + 128 * 49 + 64 * 196 + 784) + 2 * (64 * 196 + 128 * 49 + 1);

// The image DCGAN's widths per block (runspec/model_config.h), as doubles.
std::vector<double> ImageDcganWidthsOf(int64_t base, int64_t image_size) {
  const std::vector<int64_t> w = ImageDcganWidths(base, image_size);
  return std::vector<double>(w.begin(), w.end());
}

double ImageDcganParameters(const ImageDcganConfig& c) {
  const std::vector<double> g = ImageDcganWidthsOf(c.ngf, c.image_size), d = ImageDcganWidthsOf(c.ndf, c.image_size);
  double p = static_cast<double>(c.noise_dim) * g[0] * kKernel + 2 * g[0];
  for (size_t i = 1; i < g.size(); ++i) p += g[i - 1] * g[i] * kKernel + 2 * g[i];
  p += g.back() * static_cast<double>(c.channels) * kKernel;
  p += static_cast<double>(c.channels) * d.back() * kKernel;  // D's first block (the image end)
  for (size_t i = d.size() - 1; i > 0; --i) p += d[i] * d[i - 1] * kKernel + 2 * d[i - 1];
  return p + d[0] * kKernel;
}

// Per sample: G's block outputs (side 4, 8, ...) and its image, D's block outputs on a
// real and a fake image.
double ImageDcganActivationFloats(const ImageDcganConfig& c) {
  const std::vector<double> g = ImageDcganWidthsOf(c.ngf, c.image_size), d = ImageDcganWidthsOf(c.ndf, c.image_size);
  const double image = static_cast<double>(c.channels * c.image_size * c.image_size);
  double gen = image, disc = 0, side = 4;
  for (size_t i = 0; i < g.size(); ++i, side *= 2) {
    gen += g[i] * side * side;
    disc += d[i] * side * side;
  }
  return gen + 2 * (disc + 1);
}

std::string SizingSettings(const TrainConfig& c, int64_t batch, int world) {
  std::string what = absl::StrCat("--batch-size ", batch, " on ", world, world == 1 ? " rank" : " ranks");
  if (c.model == "pix2pix") {
    const int64_t unroll = c.pix2pix.unroll.steps;
    absl::StrAppend(&what, " with --model pix2pix (--image-size ", c.pix2pix.image_size, ", --ngf ", c.pix2pix.ngf,
                    ", --ndf ", c.pix2pix.ndf, unroll > 1 ? absl::StrCat(", --unroll ", unroll) : "", ")");
  } else if (UsesImageDcgan(c)) {
    absl::StrAppend(&what, " with the image DCGAN (--image-size ", c.image_dcgan.image_size, ", --channels ",
                    c.image_dcgan.channels, ", --ngf ", c.image_dcgan.ngf, ", --ndf ", c.image_dcgan.ndf, ")");
  }
  return what;
}

// The settings that shrink the run, in the refusal's words.
const char* SizingFix(const TrainConfig& c) {
  if (c.model == "pix2pix" && c.pix2pix.unroll.steps > 1) {
    return "lower --batch-size (or run on more ranks), --unroll (or add --pushforward), --ngf, --ndf or --image-size";
  }
  if (c.model == "pix2pix" || UsesImageDcgan(c)) {
    return "lower --batch-size (or run on more ranks), --ngf, --ndf or --image-size";
  }
  return "lower --batch-size, or run on more ranks";
}

}  // namespace

double Pix2pixGeneratorActivationFloats(const Pix2pixConfig& c) {
  const std::vector<double> ch = DownChannels(c);
  const double s = static_cast<double>(c.image_size);
  double floats = 0;
  for (size_t i = 0; i < ch.size(); ++i) {
    const double side = s / std::pow(2.0, static_cast<double>(i + 1));
    floats += 3 * ch[i] * side * side;  // the down block's output, and the up block's twin with its concatenation
  }
  return floats + Pix2pixConfig::kOutputChannels * s * s;
}

double ModelParameterCount(const TrainConfig& config) {
  if (config.model == "pix2pix") return UNetParameters(config.pix2pix) + PatchGanParameters(config.pix2pix);
  if (UsesImageDcgan(config)) return ImageDcganParameters(config.image_dcgan);
  return DcganParameters(config.dcgan);
}

double TrainActivationFloatsPerSample(const TrainConfig& config) {
  if (UsesImageDcgan(config)) return ImageDcganActivationFloats(config.image_dcgan) * kFloatsPerActivation;
  if (config.model != "pix2pix") return kDcganActivationFloats * kFloatsPerActivation;
  // D sees a real and a generated pair. Unrolled over M steps, G keeps the activations of
  // each step in the graph (all M, or the last one with --pushforward) and D those of each
  // step that carries a loss (all M, or the last one).
  const UnrollConfig& u = config.pix2pix.unroll;
  const double g_passes = u.pushforward ? 1 : static_cast<double>(u.steps);
  const double d_passes = u.CarriesLoss(1, u.steps) ? static_cast<double>(u.steps) : 1;
  return (g_passes * Pix2pixGeneratorActivationFloats(config.pix2pix) +
          d_passes * 2 * PatchGanActivationFloats(config.pix2pix)) *
         kFloatsPerActivation;
}

double TrainBytesPerRank(const TrainConfig& config, int64_t batch, int world) {
  const double rows = std::ceil(static_cast<double>(batch) / std::max(world, 1));
  const double floats =
      ModelParameterCount(config) * kFloatsPerParameter + rows * TrainActivationFloatsPerSample(config);
  return floats * sizeof(float);
}

absl::Status CheckRunFitsMemory(const TrainConfig& config, int world, int64_t available_bytes) {
  for (int64_t batch : config.batch_sizes) {
    const MemoryNeed need{.what = SizingSettings(config, batch, world),
                          .bytes = TrainBytesPerRank(config, batch, world),
                          .fix = SizingFix(config)};
    if (absl::Status s = CheckFitsMemory(need, available_bytes); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(s.message(), " (an estimate per rank: ",
                                                     ModelParameterCount(config), " parameters with their optimizer "
                                                     "state, and the activations of its rows)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
