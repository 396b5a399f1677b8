"""The image DCGAN that gantry's `--model dcgan --dataset images` trains, in PyTorch.

It is the network of PyTorch's examples/dcgan (Radford et al. 2016) generalised to 32, 64
and 128 px and 1-4 channels, with the same module names (`main.0`, `main.1`, ...), so a
state_dict of examples/dcgan's netG/netD at 64 px loads into it unchanged and gantry's
exported files (`gantry-worker export`) load into examples/dcgan's classes:

  G  z[N,nz,1,1] -> ConvT nz->W0 4x4 s1 p0 -> BN -> ReLU            W0 x 4 x 4
       -> (ConvT W(i-1)->Wi 4x4 s2 p1 -> BN -> ReLU) per block        doubling the side
       -> ConvT W(last)->C 4x4 s2 p1 -> Tanh                          C x S x S
  D  x -> Conv C->V0 4x4 s2 p1 -> LeakyReLU(0.2)
       -> (Conv V(i-1)->Vi 4x4 s2 p1 -> BN -> LeakyReLU(0.2)) per block
       -> Conv V(last)->1 4x4 s1 p0 -> Sigmoid                          a probability

with log2(S/4) blocks in each network, G's widths ngf x (8, 4, 2, 1) at 64 px from the
4x4 end (doubling stops at 8x: at 128 px the two widest blocks both have 8 ngf), D's the
mirror image with ndf. No convolution has a bias. BatchNorm has PyTorch's defaults (eps
1e-5, momentum 0.1). gantry's D stops before the Sigmoid (its loss takes logits), so
`logits(x)` here is D without its last module. At 64 px, 3 channels, ngf = ndf = 64:
G 3,576,704 and D 2,765,568 parameters, as examples/dcgan's.

weights_init is examples/dcgan's: convolutions N(0, 0.02), BatchNorm weights N(1, 0.02)
and biases 0 (gantry's `--init normal` draws BatchNorm weights as 1).
"""

import torch
import torch.nn as nn

NOISE_DIM = 100
MAX_MULTIPLIER = 8


def widths(base, image_size):
    """Filters per block from the 4x4 end, as runspec/model_config.cc's ImageDcganWidths."""
    assert image_size in (32, 64, 128), image_size
    blocks = {32: 3, 64: 4, 128: 5}[image_size]
    return [base * min(MAX_MULTIPLIER, 2 ** i) for i in reversed(range(blocks))]


class Generator(nn.Module):
    def __init__(self, image_size=64, channels=3, ngf=64, nz=NOISE_DIM):
        super().__init__()
        w = widths(ngf, image_size)
        layers = [nn.ConvTranspose2d(nz, w[0], 4, 1, 0, bias=False), nn.BatchNorm2d(w[0]), nn.ReLU(True)]
        for a, b in zip(w, w[1:]):
            layers += [nn.ConvTranspose2d(a, b, 4, 2, 1, bias=False), nn.BatchNorm2d(b), nn.ReLU(True)]
        layers += [nn.ConvTranspose2d(w[-1], channels, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)
        self.nz = nz

    def forward(self, z):
        return self.main(z.view(z.shape[0], self.nz, 1, 1))


class Discriminator(nn.Module):
    def __init__(self, image_size=64, channels=3, ndf=64):
        super().__init__()
        v = list(reversed(widths(ndf, image_size)))
        layers = [nn.Conv2d(channels, v[0], 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
        for a, b in zip(v, v[1:]):
            layers += [nn.Conv2d(a, b, 4, 2, 1, bias=False), nn.BatchNorm2d(b), nn.LeakyReLU(0.2, inplace=True)]
        layers += [nn.Conv2d(v[-1], 1, 4, 1, 0, bias=False), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x).view(-1, 1)

    def logits(self, x):
        """D before its Sigmoid, [N, 1]: what gantry's discriminator returns."""
        return self.main[:-1](x).view(-1, 1)


def weights_init(m):
    """examples/dcgan's initialisation."""
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def count_params(module):
    return sum(p.numel() for p in module.parameters())


if __name__ == "__main__":
    for size in (32, 64, 128):
        g, d = Generator(size), Discriminator(size)
        print(f"{size:3d} px, 3 channels: G {count_params(g):,} D {count_params(d):,}")


# --------------------------------------------------------------------------- benchmark
#
# What bench/torch/dcgan_torch.py needs of a model (`--model image-dcgan`), as
# dcgan_model.py's module-level functions give it for the 28x28 DCGAN.

LEARNING_RATE = 2e-4
BETAS = (0.5, 0.999)
ADAM_EPS = 1e-7   # gantry's --adam-eps default (examples/dcgan keeps torch's 1e-8)


def forward_macs(module, shape):
    """Multiply-adds per sample of every (transposed) convolution of `module` on one input
    of `shape`, in order, by the layer formulas (batch 1, no data)."""
    macs = []
    x = torch.zeros(1, *shape)
    for layer in module.main:
        y = layer(x)
        if isinstance(layer, nn.Conv2d):
            macs.append(layer.in_channels * layer.out_channels * layer.kernel_size[0] * layer.kernel_size[1]
                        * y.shape[2] * y.shape[3])
        elif isinstance(layer, nn.ConvTranspose2d):
            macs.append(layer.in_channels * layer.out_channels * layer.kernel_size[0] * layer.kernel_size[1]
                        * x.shape[2] * x.shape[3])
        x = y
    return macs


class Bench:
    """The image DCGAN at one size and channel count, for dcgan_torch.py --model image-dcgan."""

    def __init__(self, image_size=64, channels=3):
        self.image_shape = (channels, image_size, image_size)
        self.Generator = lambda: Generator(image_size, channels)
        self.Discriminator = lambda: Discriminator(image_size, channels)
        g = forward_macs(self.Generator(), (NOISE_DIM, 1, 1))
        d = forward_macs(self.Discriminator(), self.image_shape)
        # G forward, D forward on real and fake; G's pass: D's input gradients on the fake
        # branch, G's weight and input gradients (none for the noise); D's pass: weight
        # gradients on both branches and input gradients down to its second layer.
        self.MACS_PER_SAMPLE = 3 * sum(g) + 7 * sum(d) - g[0] - 2 * d[0]
        self.FLOPS_PER_SAMPLE = 2 * self.MACS_PER_SAMPLE
        self.name = f"image DCGAN {channels}x{image_size}x{image_size}"

    @staticmethod
    def count_params(module):
        return count_params(module)

    def build(self, seed):
        """G and D with examples/dcgan's initialisation after torch.manual_seed(seed)."""
        torch.manual_seed(seed)
        G, D = self.Generator(), self.Discriminator()
        G.apply(weights_init)
        D.apply(weights_init)
        return G.train(), _Logits(D).train()

    @staticmethod
    def adam(module):
        return torch.optim.Adam(module.parameters(), lr=LEARNING_RATE, betas=BETAS, eps=ADAM_EPS)

    def synthetic_batches(self, seed, batch, count, device):
        torch.manual_seed(seed)
        return [(torch.rand(batch, *self.image_shape) * 2 - 1).to(device) for _ in range(count)]

    @staticmethod
    def autocast_for(precision, device_type):
        import dcgan_model
        return dcgan_model.autocast_for(precision, device_type)

    @staticmethod
    def train_step(G, D, g_opt, d_opt, real, autocast):
        """dcgan_model.train_step's step (the same losses and backward passes) with this
        model's noise."""
        import dcgan_model
        return dcgan_model.train_step(G, D, g_opt, d_opt, real, autocast)


class _Logits(nn.Module):
    """D without its Sigmoid: the logits gantry's D returns and BCE-with-logits takes."""

    def __init__(self, d):
        super().__init__()
        self.d = d

    def forward(self, x):
        return self.d.logits(x)
