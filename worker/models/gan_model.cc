#include "worker/models/gan_model.h"

namespace gantry {

void GanModel::Initialize(InitScheme scheme, uint64_t seed) {
  Rng rng(seed);
  g_params().Initialize(scheme, rng);
  d_params().Initialize(scheme, rng);
}

}  // namespace gantry
