// What the label-free quality score (worker/eval/random_feature_scorer.h,
// image_quality.h) costs per epoch: the random-network features of N generated images and
// their Fréchet distance and KID against the features of N real ones (computed once per
// run, timed too), on the default host backend, one thread as a rank has. The pixels are
// seeded noise: the cost of the convolutions and of the kernel sums does not depend on
// what the images show.
//   gantry-bench-quality [--images N] [--side S] [--channels C] [--repeats R]
//
// With --pack FILE (a packed image set) it checks the score on real images instead, the
// way docs/quality.md checks the judge: against the reference a run on the set compares
// with (image_reference.h), the images held out from it (the next ones of the same
// order) must score best, degraded copies of them worse, and noise worst.
//   gantry-bench-quality --pack emoji32.pack
#include <algorithm>
#include <cstdio>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "worker/data/packed_image_rows.h"
#include "worker/eval/image_reference.h"
#include "worker/eval/random_feature_scorer.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> NoiseImages(int64_t n, int64_t channels, int64_t side, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> pixels(static_cast<size_t>(n * channels * side * side));
  for (float& p : pixels) p = static_cast<float>(2 * rng.Uniform() - 1);
  return pixels;
}

// The fastest of `repeats` runs of `fn`, in seconds.
template <typename Fn>
double Fastest(int repeats, Fn fn) {
  const Clock& clock = Clock::Real();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double start = clock.NowSeconds();
    fn();
    best = std::min(best, clock.NowSeconds() - start);
  }
  return best;
}

int Run(int64_t images, int64_t side, int64_t channels, int repeats) {
  absl::StatusOr<RandomFeatureScorer> scorer = RandomFeatureScorer::Create(channels, side);
  if (!scorer.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(scorer.status().message()).c_str());
    return 2;
  }
  Backend& backend = *FindBackend(DefaultBackendName());
  const std::vector<float> real = NoiseImages(images, channels, side, 1), fake = NoiseImages(images, channels, side, 2);
  absl::StatusOr<ReferenceFeatures> reference;
  const double reference_s = Fastest(repeats, [&] { reference = scorer->Reference(backend, real.data(), images); });
  std::vector<float> features;
  const double features_s = Fastest(repeats, [&] { features = scorer->Features(backend, fake.data(), images); });
  double fd = 0;
  const double fd_s = Fastest(repeats, [&] {
    fd = FrechetDistance(ComputeFeatureStats(features.data(), images, scorer->dim()), reference->stats);
  });
  KidEstimate kid;
  const double kid_s = Fastest(repeats, [&] {
    kid = KernelInceptionDistance(features.data(), images, reference->rows.data(), reference->count, scorer->dim());
  });
  std::printf("%lld generated %lldx%lldx%lld images against %lld real, %s kernels, fastest of %d:\n",
              static_cast<long long>(images), static_cast<long long>(channels), static_cast<long long>(side),
              static_cast<long long>(side), static_cast<long long>(images), std::string(backend.name()).c_str(),
              repeats);
  std::printf("| step | seconds |\n|---|---:|\n");
  std::printf("| reference features (once per run) | %.3f |\n", reference_s);
  std::printf("| features of the generated images | %.3f |\n", features_s);
  std::printf("| Fréchet distance (%lld features) | %.3f |\n", static_cast<long long>(scorer->dim()), fd_s);
  std::printf("| KID (%lld subsets of %lld) | %.3f |\n", static_cast<long long>(kid.subsets),
              static_cast<long long>(kid.subset_size), kid_s);
  std::printf("| per epoch (features + FD + KID) | %.3f |\n", features_s + fd_s + kid_s);
  std::printf("(FD %.4f, KID %.6f of noise against noise)\n", fd, kid.kid);
  return 0;
}

// `rows`' images order[begin, begin + n) as NCHW floats.
std::vector<float> RowsOf(const PackedImageRows& rows, const std::vector<int64_t>& order, int64_t begin, int64_t n) {
  const int64_t numel = rows.sample_shape().numel();
  std::vector<float> out(static_cast<size_t>(n * numel));
  for (int64_t i = 0; i < n; ++i) rows.CopySample(order[static_cast<size_t>(begin + i)], &out[i * numel]);
  return out;
}

// Each pixel moved `amount` of the way to its image's mean over all pixels (a flattening,
// the opposite of detail), or with `noise` > 0 seeded Gaussian noise of that std added.
std::vector<float> Degraded(std::vector<float> images, int64_t numel, double flatten, double noise) {
  Rng rng(7);
  for (size_t i0 = 0; i0 < images.size(); i0 += static_cast<size_t>(numel)) {
    double mean = 0;
    for (int64_t j = 0; j < numel; ++j) mean += images[i0 + j];
    mean /= static_cast<double>(numel);
    for (int64_t j = 0; j < numel; ++j) {
      float& p = images[i0 + j];
      p = static_cast<float>(p + flatten * (mean - p) + noise * rng.Normal());
    }
  }
  return images;
}

int CheckOnPack(const std::string& path) {
  absl::StatusOr<std::unique_ptr<PackedImages>> set = PackedImages::Open(path);
  if (!set.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(set.status().message()).c_str());
    return 2;
  }
  const PackedImagesInfo info = (*set)->info();
  const PackedImageRows rows(std::shared_ptr<const PackedImages>(std::move(*set)), 0, false);
  const int64_t n = std::min(kImageReferenceCount, info.count / 2);
  absl::StatusOr<RandomFeatureScorer> scorer = RandomFeatureScorer::Create(info.channels, info.image_size);
  if (n < 2 || !scorer.ok()) {
    std::fprintf(stderr, "error: %s\n", n < 2 ? "the set needs at least 4 images" : std::string(scorer.status().message()).c_str());
    return 2;
  }
  Backend& backend = *FindBackend(DefaultBackendName());
  const std::vector<int64_t> order = ImageReferenceOrder(info.count);
  const std::vector<float> reference_images = RowsOf(rows, order, 0, n), held_out = RowsOf(rows, order, n, n);
  absl::StatusOr<ReferenceFeatures> reference = scorer->Reference(backend, reference_images.data(), n);
  if (!reference.ok()) return 2;
  const int64_t numel = rows.sample_shape().numel();
  std::printf("%s: %lld images of %lldx%lldx%lld; the reference: %lld of them, scored against:\n", path.c_str(),
              static_cast<long long>(info.count), static_cast<long long>(info.channels),
              static_cast<long long>(info.image_size), static_cast<long long>(info.image_size),
              static_cast<long long>(n));
  std::printf("| images | FD | KID |\n|---|---:|---:|\n");
  auto row = [&](const char* what, const std::vector<float>& images) {
    absl::StatusOr<ImageQuality> q = scorer->Score(backend, images.data(), n, *reference);
    if (q.ok()) std::printf("| %s | %.3f | %.5f |\n", what, q->fd, q->kid);
  };
  row("the next images of the set (held out from the reference)", held_out);
  row("the same, flattened 25 % towards each image's mean", Degraded(held_out, numel, 0.25, 0));
  row("the same, with noise of std 0.1", Degraded(held_out, numel, 0, 0.1));
  row("the same, with noise of std 0.3", Degraded(held_out, numel, 0, 0.3));
  row("uniform noise", NoiseImages(n, info.channels, info.image_size, 3));
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  CLI::App app{"Cost of the label-free quality score per epoch (random features, FD, KID)"};
  int64_t images = 1024, side = 64, channels = 3;
  int repeats = 3;
  app.add_option("--images", images, "generated images, and as many real ones [default: 1024]")
      ->check(CLI::Range(int64_t{2}, int64_t{100000}));
  app.add_option("--side", side, "image side: 28, 32, 64 or 128 [default: 64]");
  app.add_option("--channels", channels, "1 or 3 [default: 3]");
  app.add_option("--repeats", repeats, "runs of each step; the fastest counts [default: 3]")
      ->check(CLI::Range(1, 100));
  std::string pack;
  app.add_option("--pack", pack, "check the score on a packed image set instead of timing it");
  CLI11_PARSE(app, argc, argv);
  if (!pack.empty()) return gantry::CheckOnPack(pack);
  return gantry::Run(images, side, channels, repeats);
}
