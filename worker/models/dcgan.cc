#include "worker/models/dcgan.h"

#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/dropout.h"
#include "worker/layers/linear.h"
#include "worker/layers/reshape.h"
#include "worker/tensor/random.h"

namespace gantry {

Sequential MakeDcganGenerator(const DcganConfig& c) {
  Sequential g;
  g.Add(std::make_unique<Linear>(c.noise_dim, 7 * 7 * 256, /*bias=*/false))
      .Add(std::make_unique<BatchNorm>(7 * 7 * 256, c.bn_eps, c.bn_momentum))
      .Add(MakeLeakyRelu(c.leaky_slope))
      .Add(std::make_unique<Reshape>(Shape{256, 7, 7}))
      .Add(std::make_unique<ConvTranspose2d>(256, 128, 5, 1, 2, 0, /*bias=*/false))
      .Add(std::make_unique<BatchNorm>(128, c.bn_eps, c.bn_momentum))
      .Add(MakeLeakyRelu(c.leaky_slope))
      .Add(std::make_unique<ConvTranspose2d>(128, 64, 5, 2, 2, 1, /*bias=*/false))
      .Add(std::make_unique<BatchNorm>(64, c.bn_eps, c.bn_momentum))
      .Add(MakeLeakyRelu(c.leaky_slope))
      .Add(std::make_unique<ConvTranspose2d>(64, 1, 5, 2, 2, 1, /*bias=*/false))
      .Add(MakeTanh());
  return g;
}

Sequential MakeDcganDiscriminator(const DcganConfig& c) {
  Sequential d;
  d.Add(std::make_unique<Conv2d>(1, 64, 5, 2, 2, /*bias=*/true))
      .Add(MakeLeakyRelu(c.leaky_slope))
      .Add(std::make_unique<Dropout>(c.dropout))
      .Add(std::make_unique<Conv2d>(64, 128, 5, 2, 2, /*bias=*/true))
      .Add(MakeLeakyRelu(c.leaky_slope))
      .Add(std::make_unique<Dropout>(c.dropout))
      .Add(std::make_unique<Flatten>())
      .Add(std::make_unique<Linear>(128 * 7 * 7, 1, /*bias=*/true));
  return d;
}

Dcgan::Dcgan(const DcganConfig& config)
    : config_(config),
      generator_(MakeDcganGenerator(config)),
      discriminator_(MakeDcganDiscriminator(config)) {
  const std::vector<Layer*> g_layers = generator_.layers();
  const std::vector<Layer*> d_layers = discriminator_.layers();
  g_params_ = std::make_unique<FlatParameters>(g_layers);
  d_params_ = std::make_unique<FlatParameters>(d_layers);
  CHECK_EQ(g_params_->num_params(), kDcganGeneratorParams);
  CHECK_EQ(d_params_->num_params(), kDcganDiscriminatorParams);
}

void Dcgan::Initialize(InitScheme scheme, uint64_t seed) {
  Rng rng(seed);
  g_params_->Initialize(scheme, rng);
  d_params_->Initialize(scheme, rng);
}

}  // namespace gantry
