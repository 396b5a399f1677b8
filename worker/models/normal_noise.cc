#include "worker/models/normal_noise.h"

namespace gantry {

Tensor NormalNoise(Rng& rng, int64_t rows, int64_t dim) {
  Tensor z = Tensor::Zeros(Shape{rows, dim});
  float* p = z.data();
  for (int64_t i = 0; i < z.numel(); ++i) p[i] = static_cast<float>(rng.Normal());
  return z;
}

}  // namespace gantry
