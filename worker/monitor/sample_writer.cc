#include "worker/monitor/sample_writer.h"

#include <cmath>

#include "common/status_macros.h"
#include "worker/formats/npy.h"
#include "worker/monitor/image_grid.h"

namespace gantry {

Tensor GenerateImages(Backend& backend, const Sequential& generator, const Tensor& noise, MathPrecision precision) {
  Context ctx;
  ctx.backend = &backend;
  ctx.training = false;
  ctx.param_grads = false;
  ctx.precision = precision;
  SequentialCache cache;
  return generator.Forward(ctx, noise.On(backend.device()), &cache).On(Device::kCpu);
}

absl::Status WriteGeneratorSamples(Backend& backend, const Sequential& generator, const Tensor& noise,
                                   const std::string& png_path, const std::string& npy_path, Tensor* images_out) {
  const Tensor images = GenerateImages(backend, generator, noise);
  if (images_out != nullptr) *images_out = images;
  const int64_t n = images.dim(0);
  const int64_t columns = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  RETURN_IF_ERROR(
      WriteColorPngGrid(png_path, images.data(), n, images.dim(1), images.dim(2), images.dim(3), columns));
  return WriteNpy(npy_path, images.data(), images.shape().dims());
}

}  // namespace gantry
