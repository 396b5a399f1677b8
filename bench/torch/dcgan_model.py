"""The DCGAN that gantry's `--model dcgan` is measured against, in PyTorch.

It is the network of the TensorFlow "Deep Convolutional Generative Adversarial Network"
tutorial (the model of "A Novel Mixed Precision Distributed TPU GAN", Table 1) for 1x28x28
images and 100-dimensional noise, with the Keras defaults that PyTorch does not share:

  G  z[N,100] -> Linear 100->12544 (no bias) -> BatchNorm1d -> LeakyReLU(0.3) -> 256x7x7
       -> ConvT 256->128 5x5 s1 p2 (no bias) -> BatchNorm2d -> LeakyReLU          128x7x7
       -> ConvT 128->64 5x5 s2 p2 op1 (no bias) -> BatchNorm2d -> LeakyReLU       64x14x14
       -> ConvT 64->1 5x5 s2 p2 op1 (no bias) -> tanh                             1x28x28
  D  x -> Conv 1->64 5x5 s2 p2 -> LeakyReLU(0.3) -> Dropout(0.3)                  64x14x14
       -> Conv 64->128 5x5 s2 p2 -> LeakyReLU -> Dropout                          128x7x7
       -> Flatten 6272 -> Linear 6272->1 (a logit)

  BatchNorm eps 1e-3 and momentum 0.99 in Keras's convention (0.01 in PyTorch's),
  Glorot-uniform kernels and zero biases (keras_init_), Adam(lr 1e-4, eps 1e-7).
  Parameters: G 2,305,472 + D 212,865 = 2,518,337 (running statistics not counted).
  Keras pads a stride-2 "same" transposed convolution on one side only; padding 2 with
  output_padding 1 gives the same shapes and the same work (the image moves by at most
  one pixel), which is all a throughput yardstick needs.

The parameter order (module.parameters()) is part of the contract: tests/golden/dcgan_step
and worker/models/dcgan.h lay the flat parameter buffers out in it
  G: fc.weight, bn0.weight, bn0.bias, deconv1.weight, bn1.weight, bn1.bias,
     deconv2.weight, bn2.weight, bn2.bias, deconv3.weight
  D: conv1.weight, conv1.bias, conv2.weight, conv2.bias, fc.weight, fc.bias
and scripts/make_goldens.py switches D's dropout off through its one `drop` module.

train_step is the tutorial's step: one forward of G shared by both losses, then two
backward passes restricted to one network each (TensorFlow's two gradient tapes), so no
gradient is computed that the step does not use, then Adam on G and on D.
"""

import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

NOISE_DIM = 100
IMAGE_SHAPE = (1, 28, 28)
LEAKY_SLOPE = 0.3          # Keras LeakyReLU's default alpha
BN_EPS = 1e-3              # Keras BatchNormalization's default epsilon
BN_MOMENTUM = 0.01         # Keras momentum 0.99, written the PyTorch way (1 - 0.99)
DROPOUT = 0.3
LEARNING_RATE = 1e-4
ADAM_EPS = 1e-7            # Keras Adam's default epsilon

# Multiply-adds of one training step per sample, by the layer table of bench/torch/README.md
# ("What one DCGAN step costs"): G forward 51,744,000; D forward on real and on fake
# 2 x 10,355,072; the generator pass 112,588,672 (input gradients through D's fake branch,
# then G's weight and input gradients); the discriminator pass 2 x 20,396,544 (D's weight
# gradients and the input gradients between its layers, on both branches).
# `dcgan_torch.py --count-flops` counts the same total from the operations torch runs.
MACS_PER_SAMPLE = 225_835_904
FLOPS_PER_SAMPLE = 2 * MACS_PER_SAMPLE      # 451.7 MFLOP; bench/step_throughput.cc agrees


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(NOISE_DIM, 256 * 7 * 7, bias=False)
        self.bn0 = nn.BatchNorm1d(256 * 7 * 7, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv1 = nn.ConvTranspose2d(256, 128, 5, stride=1, padding=2, bias=False)
        self.bn1 = nn.BatchNorm2d(128, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv2 = nn.ConvTranspose2d(128, 64, 5, stride=2, padding=2, output_padding=1,
                                          bias=False)
        self.bn2 = nn.BatchNorm2d(64, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv3 = nn.ConvTranspose2d(64, 1, 5, stride=2, padding=2, output_padding=1,
                                          bias=False)

    def forward(self, z):
        h = F.leaky_relu(self.bn0(self.fc(z)), LEAKY_SLOPE).view(-1, 256, 7, 7)
        h = F.leaky_relu(self.bn1(self.deconv1(h)), LEAKY_SLOPE)
        h = F.leaky_relu(self.bn2(self.deconv2(h)), LEAKY_SLOPE)
        return torch.tanh(self.deconv3(h))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 64, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2d(64, 128, 5, stride=2, padding=2)
        self.drop = nn.Dropout(DROPOUT)     # one module for both places: one switch
        self.fc = nn.Linear(128 * 7 * 7, 1)

    def forward(self, x):
        h = self.drop(F.leaky_relu(self.conv1(x), LEAKY_SLOPE))
        h = self.drop(F.leaky_relu(self.conv2(h), LEAKY_SLOPE))
        return self.fc(h.flatten(1))


def keras_init_(module):
    """Glorot-uniform weights and zero biases for every Linear and (transposed) conv."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)


def count_params(module):
    return sum(p.numel() for p in module.parameters())


def build(seed):
    """G and D with Keras's initialisation drawn after torch.manual_seed(seed), on the CPU
    (so every device and every rank starts from the same weights), in training mode."""
    torch.manual_seed(seed)
    G, D = Generator(), Discriminator()
    keras_init_(G)
    keras_init_(D)
    return G.train(), D.train()


def adam(module):
    return torch.optim.Adam(module.parameters(), lr=LEARNING_RATE, eps=ADAM_EPS)


def synthetic_batches(seed, batch, count, device):
    """`count` batches of `batch` images uniform in [-1, 1), drawn on the CPU after
    torch.manual_seed(seed) and copied to `device` once. The step draws its noise from the
    same generator afterwards, so a seed fixes the whole run."""
    torch.manual_seed(seed)
    return [(torch.rand(batch, *IMAGE_SHAPE) * 2 - 1).to(device) for _ in range(count)]


def autocast_for(precision, device_type):
    """A context-manager factory: bf16 autocast around the forward, or nothing for fp32.
    Weights, optimizer state and losses stay float32 either way."""
    if precision == "bf16":
        return lambda: torch.autocast(device_type=device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext


def train_step(G, D, g_opt, d_opt, real, autocast):
    """One training step on `real`; returns the detached (g_loss, d_loss).

    G and D may be DistributedDataParallel wrappers: their parameters() are the wrapped
    module's, and each network's gradient all-reduce runs inside its own backward pass.
    """
    noise = torch.randn(real.shape[0], NOISE_DIM, device=real.device)
    with autocast():
        fake = G(noise)
        logits_real = D(real)
        logits_fake = D(fake)
    logits_real, logits_fake = logits_real.float(), logits_fake.float()
    ones, zeros = torch.ones_like(logits_fake), torch.zeros_like(logits_fake)
    g_loss = F.binary_cross_entropy_with_logits(logits_fake, ones)
    d_loss = (F.binary_cross_entropy_with_logits(logits_real, ones)
              + F.binary_cross_entropy_with_logits(logits_fake, zeros))

    g_opt.zero_grad(set_to_none=True)
    d_opt.zero_grad(set_to_none=True)
    # G's pass: through D's fake branch (input gradients only, D's weights are not asked
    # for) into G. The graph is kept: D's pass below reuses the fake branch.
    g_loss.backward(inputs=list(G.parameters()), retain_graph=True)
    # D's pass: both branches, stopping at D's input (G's parameters are not asked for).
    d_loss.backward(inputs=list(D.parameters()))
    g_opt.step()
    d_opt.step()
    return g_loss.detach(), d_loss.detach()
