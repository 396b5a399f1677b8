#include "worker/models/gan_model.h"

namespace gantry {

void GanModel::Initialize(InitScheme scheme, uint64_t seed) {
  Rng rng(seed);
  g_params().Initialize(scheme, rng);
  d_params().Initialize(scheme, rng);
}

Tensor GanModel::SampleInputsFromRows(const Tensor& rows) const {
  CHECK(false) << "--model " << name() << " draws its sample inputs (SampleInputs), not from data rows";
  return Tensor();
}

}  // namespace gantry
