"""The PyTorch twin of gantry's `--model pix2pix` (worker/models/pix2pix.h), layer for layer.

  UNet (the generator, 4 -> 3 channels), depth n = min(log2 S, 8); down block i has
  ngf * min(2^i, 8) filters: Conv 4x4 s2 p1 (no bias) -> norm -> LeakyReLU(slope), no norm
  in the first block nor in the innermost (bottleneck) one. Up block j: ConvT 4x4 s2 p1
  (no bias) -> norm -> ReLU -> Dropout in the first three, then concatenated with the
  mirrored down block's output. Out: ConvT 4x4 s2 p1 (bias) -> tanh. With residual=True
  (gantry's --predict delta) the output is added to the condition's frame (its first 3
  channels), as worker/models/residual_next_frame.h does.
  PatchGAN (the discriminator) on concat(condition, image), 7 channels: Conv(ndf) s2 ->
  LReLU -> Conv(2ndf) s2 -> norm -> LReLU -> Conv(4ndf) s2 -> norm -> LReLU -> Conv(8ndf)
  s1 -> norm -> LReLU -> Conv(1) s1 (bias); all 4x4, padding 1; S/8 - 2 logits a side.
  norm: BatchNorm2d with gantry's Keras conventions (eps 1e-3, momentum 0.99, i.e.
  torch's momentum 0.01), or InstanceNorm2d (eps 1e-5, no affine parameters).

The state_dict keys are what `gantry-worker export` writes (docs/export.md):
  UNet:     down.<i>.0.weight, down.<i>.1.{weight,bias,running_mean,running_var,
            num_batches_tracked} (normed blocks, batch norm), up.<j>.0.weight,
            up.<j>.1.*, out.weight, out.bias
  PatchGAN: net.0.weight, net.{2,5,8}.weight, net.{3,6,9}.* (batch norm),
            net.11.weight, net.11.bias
bench/torch/pix2pix_torch.py times these networks; bench/torch/gantry_safetensors.py
builds them from an exported file's metadata.
"""
import torch
import torch.nn as nn

IN_CHANNELS, OUT_CHANNELS = 4, 3
SLOPE = 0.2
BN_EPS, BN_TORCH_MOMENTUM = 1e-3, 0.01
IN_EPS = 1e-5


def norm_layer(kind, channels, bn_eps=BN_EPS, bn_momentum=BN_TORCH_MOMENTUM, in_eps=IN_EPS):
    if kind == "instance":
        return nn.InstanceNorm2d(channels, eps=in_eps, affine=False, track_running_stats=False)
    return nn.BatchNorm2d(channels, eps=bn_eps, momentum=bn_momentum)


def unet_depth(size):
    depth = 0
    while (1 << (depth + 1)) <= size:
        depth += 1
    return min(depth, 8)


class UNet(nn.Module):
    def __init__(self, size, ngf, norm, dropout=0.5, slope=SLOPE, residual=False, **norm_args):
        super().__init__()
        self.residual = residual
        n = unet_depth(size)
        ch = [ngf * min(1 << i, 8) for i in range(n)]
        self.down = nn.ModuleList()
        for i in range(n):
            cin = IN_CHANNELS if i == 0 else ch[i - 1]
            layers = [nn.Conv2d(cin, ch[i], 4, 2, 1, bias=False)]
            if 0 < i < n - 1:
                layers.append(norm_layer(norm, ch[i], **norm_args))
            layers.append(nn.LeakyReLU(slope))
            self.down.append(nn.Sequential(*layers))
        self.up = nn.ModuleList()
        for j in range(n - 1):
            cin = ch[n - 1] if j == 0 else 2 * ch[n - 1 - j]
            cout = ch[n - 2 - j]
            layers = [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), norm_layer(norm, cout, **norm_args),
                      nn.ReLU()]
            if j < 3 and dropout > 0:
                layers.append(nn.Dropout(dropout))
            self.up.append(nn.Sequential(*layers))
        self.out = nn.ConvTranspose2d(ch[0] if n == 1 else 2 * ch[0], OUT_CHANNELS, 4, 2, 1, bias=True)

    def forward(self, x):
        condition = x
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
        skips = skips[:-1][::-1]
        for block, skip in zip(self.up, skips):
            x = torch.cat([block(x), skip], dim=1)
        y = torch.tanh(self.out(x))
        return condition[:, :OUT_CHANNELS] + y if self.residual else y


class PatchGAN(nn.Module):
    def __init__(self, ndf, norm, slope=SLOPE, **norm_args):
        super().__init__()
        f1, f2, f3, f4 = ndf, 2 * ndf, 4 * ndf, 8 * ndf
        self.net = nn.Sequential(
            nn.Conv2d(IN_CHANNELS + OUT_CHANNELS, f1, 4, 2, 1, bias=False), nn.LeakyReLU(slope),
            nn.Conv2d(f1, f2, 4, 2, 1, bias=False), norm_layer(norm, f2, **norm_args), nn.LeakyReLU(slope),
            nn.Conv2d(f2, f3, 4, 2, 1, bias=False), norm_layer(norm, f3, **norm_args), nn.LeakyReLU(slope),
            nn.Conv2d(f3, f4, 4, 1, 1, bias=False), norm_layer(norm, f4, **norm_args), nn.LeakyReLU(slope),
            nn.Conv2d(f4, 1, 4, 1, 1, bias=True))

    def forward(self, condition, image):
        return self.net(torch.cat([condition, image], dim=1))


def init_normal(module):
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
