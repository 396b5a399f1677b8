#!/usr/bin/env python3
"""Regenerates the PyTorch reference values ("goldens") under tests/golden/.

Run with the interpreter that has Debian's python3-torch, from anywhere:
    /usr/bin/python3 scripts/make_goldens.py              # rewrites tests/golden/
    /usr/bin/python3 scripts/make_goldens.py --out DIR    # writes the arrays into DIR instead
It rewrites every .npy file under the output folder and is deterministic: the same torch
and numpy give byte-identical files (so `--out` into an empty folder and `cmp` against
tests/golden/ tells whether the goldens would change). The DCGAN is the benchmark's own
model, bench/torch/dcgan_model.py (the network bench/torch/dcgan_torch.py times). The C++
tests tests/layers/golden_layers_test.cc and tests/models/dcgan_golden_test.cc read them
through tests/testing/golden.h.

Precision choice
  Every input (data, parameters, upstream gradients, running statistics) is drawn as
  float32, so it is exactly representable in the C++ fp32 code. The reference
  computation then runs in float64 on those exact values and each result is rounded
  once to float32 when saved. The goldens are therefore the exact answers up to one
  final rounding, and a test tolerance only has to absorb the C++ side's own fp32
  rounding, not torch's as well. (A float32 torch run is also made for the DCGAN step
  and its distance from the float64 run printed, as a yardstick for the tolerances.)

Files
  All arrays are NumPy .npy, little-endian float32 ('<f4'), except index arrays, which
  are float64 ('<f8', exact for integers below 2**53); the C++ reader handles both.
  Layer cases, tests/golden/<case>/:
    x.npy        layer input
    params.npy   flat parameters, torch.cat([p.flatten() for p in module.parameters()])
                 (weight then bias; gamma then beta)
    dy.npy       a random upstream gradient dL/dy
    y.npy        Forward output (training mode)
    dx.npy       dL/dx
    dparams.npy  flat dL/dparams, same order as params.npy
    BatchNorm only:
    buffers.npy        running_mean then running_var before the training forward
                       (random, not 0/1, so the momentum update is visible)
    buffers_after.npy  the same after one training forward (momentum 0.01 in PyTorch's
                       convention = Keras 0.99; running_var takes the unbiased variance)
    y_eval.npy         eval-mode output on the same x with the updated running stats
    InstanceNorm (instance_norm2d): x, dy, y, dx only (no parameters, no buffers).
  diff_augment: x.npy [4, 3, 16, 10], draws.npy ([4, 7] float64: per image brightness,
    saturation, contrast, shift_y, shift_x, cut_top, cut_left), dy.npy, and for each
    policy in color, translation, cutout, all: y_<policy>.npy, dx_<policy>.npy (the
    authors' formulas with those draws: write_diff_augment()). Read by
    tests/layers/diff_augment_test.cc.
  dcgan_step: see write_dcgan_step() and tests/golden/dcgan_step/README.md.
  pix2pix_step, pix2pix_step_bf16: see write_pix2pix_steps() and
  tests/golden/pix2pix_step/README.md.
  image_dcgan_step: see write_image_dcgan_step() and tests/golden/image_dcgan_step/README.md.
  kid: the Kernel Inception Distance of fixed feature rows; see write_kid_case() and
  tests/golden/kid/README.md.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing the model must not leave __pycache__ in bench/

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "tests", "golden")   # main() points it elsewhere with --out
OTHER_SCRIPTS_FOLDERS = {"image_resize"}          # tests/golden/ folders this script does not write


def load_reference():
    """The reference DCGAN: bench/torch/dcgan_model.py (Generator, Discriminator, ...)."""
    sys.path.insert(0, os.path.join(REPO, "bench", "torch"))
    import dcgan_model
    return dcgan_model


def f32(t):
    """A tensor (any dtype) as a float32 numpy array."""
    return t.detach().to(torch.float32).cpu().numpy()


def save(case, name, array):
    array = np.ascontiguousarray(array)
    assert array.dtype in (np.float32, np.float64), (case, name, array.dtype)
    np.save(os.path.join(GOLDEN, case, name), array)


def flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def set_flat(tensors, values):
    """Copies consecutive slices of the 1-D `values` into `tensors`, in order."""
    offset = 0
    with torch.no_grad():
        for t in tensors:
            n = t.numel()
            t.copy_(values[offset:offset + n].view_as(t))
            offset += n
    assert offset == values.numel()


# --------------------------------------------------------------------------- layers

def layer_case(name, module, x, *, bn=False):
    """Runs `module` (float64) forward/backward on the exact-fp32 input `x` and saves
    the case. Parameters are random float32 values, drawn by the caller's seed."""
    os.makedirs(os.path.join(GOLDEN, name), exist_ok=True)
    module = module.double()
    params = list(module.parameters())
    p32 = torch.cat([torch.randn(p.numel()) * (0.5 if not bn else 1.0) for p in params])
    if bn:  # gamma around 1, beta around 0
        c = params[0].numel()
        p32[:c] = 1.0 + 0.25 * p32[:c]
        p32[c:] = 0.5 * p32[c:]
    p32 = p32.float()
    set_flat(params, p32.double())
    if bn:
        c = module.running_mean.numel()
        b32 = torch.cat([0.3 * torch.randn(c), 0.5 + torch.rand(c)]).float()
        set_flat([module.running_mean, module.running_var], b32.double())
        save(name, "buffers.npy", b32.numpy())

    module.train()
    xd = x.double().requires_grad_(True)
    y = module(xd)
    dy = torch.randn(y.shape).float()
    grads = torch.autograd.grad(y, [xd] + params, grad_outputs=dy.double())
    save(name, "x.npy", x.numpy())
    save(name, "params.npy", p32.numpy())
    save(name, "dy.npy", dy.numpy())
    save(name, "y.npy", f32(y))
    save(name, "dx.npy", f32(grads[0]))
    save(name, "dparams.npy", f32(flat(grads[1:])))
    if bn:
        save(name, "buffers_after.npy", f32(flat([module.running_mean, module.running_var])))
        module.eval()
        with torch.no_grad():
            save(name, "y_eval.npy", f32(module(x.double())))


def write_layer_cases():
    torch.manual_seed(1234)
    layer_case("linear", nn.Linear(7, 5, bias=True), torch.randn(4, 7))
    # Non-square image: catches height/width mix-ups.
    layer_case("conv2d_s1", nn.Conv2d(3, 4, 3, stride=1, padding=1, bias=False),
               torch.randn(2, 3, 5, 7))
    # D's geometry (k5 s2 p2 with bias) on an even size, like 14 -> 7.
    layer_case("conv2d_s2", nn.Conv2d(3, 4, 5, stride=2, padding=2, bias=True),
               torch.randn(2, 3, 8, 8))
    # G's deconv1 geometry, and deconv2/3 (4 -> 8 like 7 -> 14).
    layer_case("conv_transpose2d_s1",
               nn.ConvTranspose2d(4, 3, 5, stride=1, padding=2, bias=False),
               torch.randn(2, 4, 5, 5))
    layer_case("conv_transpose2d_s2_op1",
               nn.ConvTranspose2d(4, 3, 5, stride=2, padding=2, output_padding=1, bias=False),
               torch.randn(2, 4, 4, 4))
    # Channels with their own offsets and scales, as real pre-BN activations have.
    shift1, scale1 = torch.randn(5), 0.5 + torch.rand(5)
    layer_case("batch_norm1d", nn.BatchNorm1d(5, eps=1e-3, momentum=0.01),
               (torch.randn(6, 5) * scale1 + shift1).float(), bn=True)
    shift2, scale2 = torch.randn(3, 1, 1), 0.5 + torch.rand(3, 1, 1)
    layer_case("batch_norm2d", nn.BatchNorm2d(3, eps=1e-3, momentum=0.01),
               (torch.randn(4, 3, 5, 5) * scale2 + shift2).float(), bn=True)
    instance_norm_case()


def instance_norm_case():
    """nn.InstanceNorm2d with its defaults (eps 1e-5, no affine, no running stats) on
    planes with their own offsets and scales; non-square, so H and W cannot be mixed."""
    name = "instance_norm2d"
    os.makedirs(os.path.join(GOLDEN, name), exist_ok=True)
    x = (torch.randn(3, 4, 5, 6) * (0.5 + torch.rand(3, 4, 1, 1)) + torch.randn(3, 4, 1, 1)).float()
    xd = x.double().requires_grad_(True)
    y = nn.InstanceNorm2d(4)(xd)
    dy = torch.randn(y.shape).float()
    (dx,) = torch.autograd.grad(y, [xd], grad_outputs=dy.double())
    save(name, "x.npy", x.numpy())
    save(name, "dy.npy", dy.numpy())
    save(name, "y.npy", f32(y))
    save(name, "dx.npy", f32(dx))


# --------------------------------------------------------------------------- DiffAugment

# Per image: brightness, saturation, contrast, shift_y, shift_x, cut_top, cut_left, the
# fields of worker/layers/diff_augment.h's AugmentDraw. Chosen, not drawn: a full
# desaturation, the extreme shifts, and cutout rectangles sticking out of every side
# (H 16 gives an 8-row cutout starting in [-4, 12]; W 10 a 5-column one starting in
# [-2, 7]), inside the ranges the C++ draws from.
DIFF_AUGMENT_DRAWS = [  # dyadic, so exact in the C++ float fields
    [0.3125, 0.0, 1.375, -2, 1, -4, 7],
    [-0.5, 1.875, 0.5, 2, -1, 12, -2],
    [0.0, 1.0, 1.0, 0, 0, 4, 2],
    [-0.125, 0.6875, 0.875, 1, -1, 0, 5],
]
DIFF_AUGMENT_POLICIES = {"color": ["color"], "translation": ["translation"], "cutout": ["cutout"],
                         "all": ["color", "translation", "cutout"]}


def diff_augment(x, draws, transforms):
    """DiffAugment's formulas (its DiffAugment_pytorch.py) with the given draws instead of
    random ones, in float64: color (brightness, saturation, contrast), translation by
    indexing a 1-pixel zero-padded image with clamped indices, cutout by a mask written
    at clamped indices, as the authors compute them."""
    n, _, h, w = x.shape
    col = lambda k: draws[:, k].view(n, 1, 1, 1)
    if "color" in transforms:
        x = x + col(0)
        x = (x - x.mean(dim=1, keepdim=True)) * col(1) + x.mean(dim=1, keepdim=True)
        x = (x - x.mean(dim=[1, 2, 3], keepdim=True)) * col(2) + x.mean(dim=[1, 2, 3], keepdim=True)
    batch, rows, cols = torch.meshgrid(torch.arange(n), torch.arange(h), torch.arange(w), indexing="ij")
    if "translation" in transforms:
        shift_y = draws[:, 3].long().view(n, 1, 1)
        shift_x = draws[:, 4].long().view(n, 1, 1)
        from_rows = torch.clamp(rows + shift_y + 1, 0, h + 1)
        from_cols = torch.clamp(cols + shift_x + 1, 0, w + 1)
        padded = F.pad(x, [1, 1, 1, 1])
        x = padded.permute(0, 2, 3, 1)[batch, from_rows, from_cols].permute(0, 3, 1, 2)
    if "cutout" in transforms:
        cut_h, cut_w = h // 2, w // 2
        b, i, j = torch.meshgrid(torch.arange(n), torch.arange(cut_h), torch.arange(cut_w), indexing="ij")
        i = torch.clamp(i + draws[:, 5].long().view(n, 1, 1), 0, h - 1)
        j = torch.clamp(j + draws[:, 6].long().view(n, 1, 1), 0, w - 1)
        mask = torch.ones(n, h, w, dtype=x.dtype)
        mask[b, i, j] = 0
        x = x * mask.unsqueeze(1)
    return x


def write_diff_augment():
    """tests/golden/diff_augment/: x, draws and dy, and per policy y_<policy>.npy and
    dx_<policy>.npy (policies: DIFF_AUGMENT_POLICIES' keys)."""
    case = "diff_augment"
    os.makedirs(os.path.join(GOLDEN, case), exist_ok=True)
    torch.manual_seed(2020)
    # Colour images with their own offsets per channel, as real ones have.
    x = (torch.rand(4, 3, 16, 10) * 1.6 - 0.8 + 0.2 * torch.randn(4, 3, 1, 1)).float()
    dy = torch.randn(4, 3, 16, 10).float()
    draws = torch.tensor(DIFF_AUGMENT_DRAWS, dtype=torch.float64)
    save(case, "x.npy", x.numpy())
    save(case, "dy.npy", dy.numpy())
    save(case, "draws.npy", draws.numpy())
    for name, transforms in DIFF_AUGMENT_POLICIES.items():
        xd = x.double().requires_grad_(True)
        y = diff_augment(xd, draws, transforms)
        (dx,) = torch.autograd.grad(y, [xd], grad_outputs=dy.double())
        save(case, f"y_{name}.npy", f32(y))
        save(case, f"dx_{name}.npy", f32(dx))


# --------------------------------------------------------------------------- DCGAN step

BATCH = 8
G_SEED = 1
D_SEED = 2
SUBSAMPLE_STRIDE = 97
ADAM = dict(lr=1e-4, betas=(0.5, 0.999), eps=1e-7)
MASK64 = (1 << 64) - 1


def splitmix64(x):
    """SplitMix64's output function (Steele et al.), on numpy uint64 arrays (wrapping)."""
    with np.errstate(over="ignore"):
        z = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(MASK64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def recipe_params(seed, layout):
    """The deterministic initial parameters the C++ test rebuilds exactly.

    For flat index i (0-based over the network's whole flat buffer):
      h = splitmix64(seed * 2**32 + i)          (uint64, wrapping arithmetic)
      v = ((h >> 40) - 2**23) / 2**23            in [-1, 1), exact (24-bit integer)
      p = base + v / 16                          base 1 for BatchNorm gammas, else 0
    computed in float64 and rounded once to float32 (round to nearest even). v/16 is
    exact, so only gammas (1 + v/16) round. Integer hashing, not sin/cos, so no libm
    differences can creep in between numpy and C++.
    """
    n = int(sum(numel for _, numel, _ in layout))
    i = np.arange(n, dtype=np.uint64)
    h = splitmix64(np.uint64(seed) * np.uint64(1 << 32) + i)
    v = ((h >> np.uint64(40)).astype(np.int64) - (1 << 23)).astype(np.float64) / float(1 << 23)
    base = np.zeros(n)
    for offset, numel, is_gamma in layout:
        if is_gamma:
            base[offset:offset + numel] = 1.0
    return (base + v / 16.0).astype(np.float32)


def param_layout(module):
    """[(offset, numel, is_gamma)] per parameter tensor in module.parameters() order."""
    bn_weights = {id(m.weight) for m in module.modules()
                  if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))}
    layout, offset = [], 0
    for p in module.parameters():
        layout.append((offset, p.numel(), id(p) in bn_weights))
        offset += p.numel()
    return layout


def subsample_indices(module, layout):
    """Every SUBSAMPLE_STRIDE-th flat index, plus every element of each tensor that is
    not a Linear/Conv weight (biases, BN gammas and betas), sorted and unique."""
    weights = {id(m.weight) for m in module.modules()
               if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d))}
    n = int(sum(numel for _, numel, _ in layout))
    keep = set(range(0, n, SUBSAMPLE_STRIDE))
    for p, (offset, numel, _) in zip(module.parameters(), layout):
        if id(p) not in weights:
            keep.update(range(offset, offset + numel))
        else:  # a run of >= 97 consecutive indices always holds a multiple of 97
            assert numel >= SUBSAMPLE_STRIDE, (offset, numel)
    return np.array(sorted(keep), dtype=np.int64)


def build_models(ref, dtype):
    G, D = ref.Generator(), ref.Discriminator()
    # Dropout off: the C++ dropout RNG is not torch's, so masks could never match.
    D.drop.p = 0.0
    for m in D.modules():
        assert not isinstance(m, nn.Dropout) or m.p == 0.0
    g_layout, d_layout = param_layout(G), param_layout(D)
    set_flat(list(G.parameters()), torch.from_numpy(recipe_params(G_SEED, g_layout)).double())
    set_flat(list(D.parameters()), torch.from_numpy(recipe_params(D_SEED, d_layout)).double())
    G.to(dtype).train()
    D.to(dtype).train()
    return G, D, g_layout, d_layout


def gan_step(G, D, z, real):
    """The reference train_step, with gradients returned instead of accumulated."""
    dtype = next(G.parameters()).dtype
    fake = G(z.to(dtype))
    real_logits = D(real.to(dtype))
    fake_logits = D(fake)
    g_loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
    d_loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
              + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    g_grads = torch.autograd.grad(g_loss, list(G.parameters()), retain_graph=True)
    d_grads = torch.autograd.grad(d_loss, list(D.parameters()))
    return dict(fake=fake, real_logits=real_logits, fake_logits=fake_logits,
                d_loss=d_loss, g_loss=g_loss, g_grads=flat(g_grads), d_grads=flat(d_grads))


def adam_step(module, grads):
    params = list(module.parameters())
    opt = torch.optim.Adam(params, **ADAM)
    offset = 0
    for p in params:
        p.grad = grads[offset:offset + p.numel()].view_as(p).clone()
        offset += p.numel()
    opt.step()
    return flat(params)


def g_buffers(G):
    return flat([t for m in G.modules() if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))
                 for t in (m.running_mean, m.running_var)])


def write_dcgan_step(ref):
    case = "dcgan_step"
    os.makedirs(os.path.join(GOLDEN, case), exist_ok=True)
    torch.manual_seed(4321)
    z = torch.randn(BATCH, ref.NOISE_DIM)
    real = torch.rand(BATCH, *ref.IMAGE_SHAPE) * 2 - 1

    G, D, g_layout, d_layout = build_models(ref, torch.float64)
    assert ref.count_params(G) == 2_305_472, ref.count_params(G)
    assert ref.count_params(D) == 212_865, ref.count_params(D)
    g_buffers_before = f32(g_buffers(G))
    out = gan_step(G, D, z, real)
    g_after = adam_step(G, out["g_grads"])
    d_after = adam_step(D, out["d_grads"])

    g_idx, d_idx = subsample_indices(G, g_layout), subsample_indices(D, d_layout)
    save(case, "z.npy", z.numpy())
    save(case, "real.npy", real.numpy())
    save(case, "fake.npy", f32(out["fake"]))
    save(case, "real_logits.npy", f32(out["real_logits"]))
    save(case, "fake_logits.npy", f32(out["fake_logits"]))
    save(case, "losses.npy", np.array([out["d_loss"].item(), out["g_loss"].item()], np.float32))
    save(case, "g_layout.npy", np.array(g_layout, dtype=np.float64))
    save(case, "d_layout.npy", np.array(d_layout, dtype=np.float64))
    save(case, "g_indices.npy", g_idx.astype(np.float64))
    save(case, "d_indices.npy", d_idx.astype(np.float64))
    save(case, "g_grads.npy", f32(out["g_grads"][g_idx]))
    save(case, "d_grads.npy", f32(out["d_grads"][d_idx]))
    save(case, "g_params_after.npy", f32(g_after[g_idx]))
    save(case, "d_params_after.npy", f32(d_after[d_idx]))
    save(case, "g_buffers.npy", g_buffers_before)
    save(case, "g_buffers_after.npy", f32(g_buffers(G)))

    # Yardstick for the C++ tolerances: the same step in float32 torch.
    G32, D32, _, _ = build_models(ref, torch.float32)
    o32 = gan_step(G32, D32, z, real)
    g32_after, d32_after = adam_step(G32, o32["g_grads"]), adam_step(D32, o32["d_grads"])

    def report(what, a, b):
        a, b = a.detach().double(), b.detach().double()
        scale = b.abs().max().item()
        err = (a - b).abs().max().item()
        print(f"  {what:<16} max|ref| {scale:10.3e}  max|fp32 - fp64| {err:10.3e}"
              f"  ({err / max(scale, 1e-30):9.2e} of max)")

    print("dcgan_step: float32 torch vs the float64 goldens")
    report("fake", o32["fake"], out["fake"])
    report("logits", torch.cat([o32["real_logits"], o32["fake_logits"]]),
           torch.cat([out["real_logits"], out["fake_logits"]]))
    report("losses", torch.stack([o32["d_loss"], o32["g_loss"]]),
           torch.stack([out["d_loss"], out["g_loss"]]))
    for name, idx in (("g", g_idx), ("d", d_idx)):
        grads, grads32 = out[name + "_grads"], o32[name + "_grads"]
        report(name + "_grads", grads32[idx], grads[idx])
        for (offset, numel, _), p in zip(g_layout if name == "g" else d_layout,
                                         (G if name == "g" else D).named_parameters()):
            report(f"  {p[0]}", grads32[offset:offset + numel], grads[offset:offset + numel])
        after, after32 = (g_after, g32_after) if name == "g" else (d_after, d32_after)
        report(name + "_params_after", after32[idx], after[idx])
        small = grads[idx].abs().min().item()
        print(f"  {name}: smallest |grad| among saved {small:.3e} (Adam eps {ADAM['eps']})")
    report("g_buffers_after", g_buffers(G32), g_buffers(G))


# --------------------------------------------------------------------------- image DCGAN step
#
# The image DCGAN (bench/torch/image_dcgan_model.py, examples/dcgan's network) at 32 px, 3
# channels, ngf = ndf = 8 and batch 4: every kind of block (G's first, a middle and its
# output; D's first, a BatchNorm block and its logit) at a size the C++ test runs fast.
# gantry's D returns logits: the reference's D without its Sigmoid (D.logits).

IMG_SIZE = 32
IMG_CHANNELS = 3
IMG_FILTERS = 8
IMG_BATCH = 4
IMG_G_SEED = 5
IMG_D_SEED = 6


def load_image_dcgan():
    sys.path.insert(0, os.path.join(REPO, "bench", "torch"))
    import image_dcgan_model
    return image_dcgan_model


def write_image_dcgan_step():
    case = "image_dcgan_step"
    img = load_image_dcgan()
    os.makedirs(os.path.join(GOLDEN, case), exist_ok=True)
    torch.manual_seed(2468)
    z = torch.randn(IMG_BATCH, img.NOISE_DIM)
    real = torch.rand(IMG_BATCH, IMG_CHANNELS, IMG_SIZE, IMG_SIZE) * 2 - 1

    def build(dtype):
        G = img.Generator(IMG_SIZE, IMG_CHANNELS, IMG_FILTERS)
        D = img.Discriminator(IMG_SIZE, IMG_CHANNELS, IMG_FILTERS)
        g_layout, d_layout = param_layout(G), param_layout(D)
        set_flat(list(G.parameters()), torch.from_numpy(recipe_params(IMG_G_SEED, g_layout)).double())
        set_flat(list(D.parameters()), torch.from_numpy(recipe_params(IMG_D_SEED, d_layout)).double())
        return G.to(dtype).train(), D.to(dtype).train(), g_layout, d_layout

    def step(G, D):
        dtype = next(G.parameters()).dtype
        fake = G(z.to(dtype))
        real_logits = D.logits(real.to(dtype))
        fake_logits = D.logits(fake)
        g_loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
        d_loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                  + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
        g_grads = torch.autograd.grad(g_loss, list(G.parameters()), retain_graph=True)
        d_grads = torch.autograd.grad(d_loss, list(D.parameters()))
        return dict(fake=fake, real_logits=real_logits, fake_logits=fake_logits, d_loss=d_loss,
                    g_loss=g_loss, g_grads=flat(g_grads), d_grads=flat(d_grads))

    def bn_buffers(module):
        return flat([t for m in module.modules() if isinstance(m, nn.BatchNorm2d)
                     for t in (m.running_mean, m.running_var)])

    G, D, g_layout, d_layout = build(torch.float64)
    out = step(G, D)
    g_idx, d_idx = subsample_indices(G, g_layout), subsample_indices(D, d_layout)
    save(case, "z.npy", z.numpy())
    save(case, "real.npy", real.numpy())
    save(case, "fake.npy", f32(out["fake"]))
    save(case, "real_logits.npy", f32(out["real_logits"]))
    save(case, "fake_logits.npy", f32(out["fake_logits"]))
    save(case, "losses.npy", np.array([out["d_loss"].item(), out["g_loss"].item()], np.float32))
    save(case, "g_layout.npy", np.array(g_layout, dtype=np.float64))
    save(case, "d_layout.npy", np.array(d_layout, dtype=np.float64))
    save(case, "g_indices.npy", g_idx.astype(np.float64))
    save(case, "d_indices.npy", d_idx.astype(np.float64))
    save(case, "g_grads.npy", f32(out["g_grads"][g_idx]))
    save(case, "d_grads.npy", f32(out["d_grads"][d_idx]))
    # Running statistics after the step: G's from its one forward, D's from its two
    # (real, then fake), in module order: every BatchNorm's running_mean then running_var.
    save(case, "g_buffers_after.npy", f32(bn_buffers(G)))
    save(case, "d_buffers_after.npy", f32(bn_buffers(D)))

    G32, D32, _, _ = build(torch.float32)
    o32 = step(G32, D32)
    print("image_dcgan_step: float32 torch vs the float64 goldens")
    for what in ("fake", "real_logits", "fake_logits", "g_grads", "d_grads"):
        a, b = o32[what].detach().double(), out[what].detach().double()
        print(f"  {what:<12} max|ref| {b.abs().max().item():10.3e}  max|fp32 - fp64| "
              f"{(a - b).abs().max().item():10.3e}")
    print("  parameters at 64 px, 3 channels, 64 filters: G", img.count_params(img.Generator()),
          "D", img.count_params(img.Discriminator()))


# --------------------------------------------------------------------------- Pix2Pix step
#
# A PyTorch Pix2Pix written from the description in worker/models/pix2pix.h (the TF
# tutorial's network with our decisions: no norm in the first and innermost down blocks,
# LeakyReLU 0.2, ReLU then Dropout in the up blocks, halved D loss), at 32 px with
# ngf = ndf = 8: a U-Net of depth 5 and a 2x2 PatchGAN.

P2P_SIZE = 32
P2P_NGF = 8
P2P_NDF = 8
P2P_BATCH = 4
P2P_SLOPE = 0.2
P2P_L1 = 100.0
P2P_G_SEED = 3
P2P_D_SEED = 4


def bf16_round(t):
    """Rounds to bfloat16 (round to nearest even) and back to t's dtype: the project's
    bf16 math rounds both operands of every convolution-family product this way and
    accumulates in fp32 (worker/tensor/cpu/operand_rounding.h)."""
    return t.to(torch.bfloat16).to(t.dtype)


class Bf16Conv2d(torch.autograd.Function):
    """conv2d whose three products (forward, input and weight gradients) take bf16-rounded
    operands, as the C++ ConvForward / ConvBackwardData / ConvBackwardWeights do."""

    @staticmethod
    def forward(ctx, x, w, stride, padding):
        ctx.save_for_backward(x, w)
        ctx.conf = (stride, padding)
        return F.conv2d(bf16_round(x), bf16_round(w), None, stride, padding)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        stride, padding = ctx.conf
        dx = torch.nn.grad.conv2d_input(x.shape, bf16_round(w), bf16_round(dy), stride, padding)
        dw = torch.nn.grad.conv2d_weight(bf16_round(x), w.shape, bf16_round(dy), stride, padding)
        return dx, dw, None, None


class Bf16ConvTranspose2d(torch.autograd.Function):
    """conv_transpose2d (weight [in, out, k, k]) with bf16-rounded operands: the adjoint
    of conv2d, so its forward is conv2d's input gradient and its gradients are conv2d
    and conv2d's weight gradient with the roles of x and dy swapped."""

    @staticmethod
    def forward(ctx, x, w, stride, padding):
        ctx.save_for_backward(x, w)
        ctx.conf = (stride, padding)
        return F.conv_transpose2d(bf16_round(x), bf16_round(w), None, stride, padding)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        stride, padding = ctx.conf
        dx = F.conv2d(bf16_round(dy), bf16_round(w), None, stride, padding)
        dw = torch.nn.grad.conv2d_weight(bf16_round(dy), w.shape, bf16_round(x), stride, padding)
        return dx, dw, None, None


class Conv(nn.Conv2d):
    """4x4 convolution that switches to the bf16-operand product when .bf16 is set."""
    bf16 = False

    def forward(self, x):
        if not self.bf16:
            return super().forward(x)
        y = Bf16Conv2d.apply(x, self.weight, self.stride, self.padding)
        return y if self.bias is None else y + self.bias.view(1, -1, 1, 1)


class ConvT(nn.ConvTranspose2d):
    bf16 = False

    def forward(self, x):
        if not self.bf16:
            return super().forward(x)
        y = Bf16ConvTranspose2d.apply(x, self.weight, self.stride, self.padding)
        return y if self.bias is None else y + self.bias.view(1, -1, 1, 1)


def p2p_norm(c):
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


class UNet(nn.Module):
    def __init__(self, size, ngf, in_ch=4, out_ch=3):
        super().__init__()
        n = min(int(np.log2(size)), 8)
        ch = [ngf * min(2 ** i, 8) for i in range(n)]
        self.n = n
        self.downs = nn.ModuleList()
        for i in range(n):
            layers = [Conv(in_ch if i == 0 else ch[i - 1], ch[i], 4, 2, 1, bias=False)]
            if 0 < i < n - 1:
                layers.append(p2p_norm(ch[i]))
            layers.append(nn.LeakyReLU(P2P_SLOPE))
            self.downs.append(nn.Sequential(*layers))
        self.ups = nn.ModuleList()
        for j in range(n - 1):
            cin = ch[n - 1] if j == 0 else 2 * ch[n - 1 - j]
            layers = [ConvT(cin, ch[n - 2 - j], 4, 2, 1, bias=False), p2p_norm(ch[n - 2 - j]),
                      nn.Dropout(0.0), nn.ReLU()]  # dropout off: the C++ masks differ
            self.ups.append(nn.Sequential(*layers))
        self.out = ConvT(2 * ch[0], out_ch, 4, 2, 1, bias=True)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
        for j, up in enumerate(self.ups):
            x = torch.cat([up(x), skips[self.n - 2 - j]], dim=1)
        return torch.tanh(self.out(x))


class PatchGan(nn.Module):
    def __init__(self, ndf, in_ch=7):
        super().__init__()
        f = [ndf, 2 * ndf, 4 * ndf, 8 * ndf]
        lrelu = lambda: nn.LeakyReLU(P2P_SLOPE)
        self.net = nn.Sequential(
            Conv(in_ch, f[0], 4, 2, 1, bias=False), lrelu(),
            Conv(f[0], f[1], 4, 2, 1, bias=False), p2p_norm(f[1]), lrelu(),
            Conv(f[1], f[2], 4, 2, 1, bias=False), p2p_norm(f[2]), lrelu(),
            Conv(f[2], f[3], 4, 1, 1, bias=False), p2p_norm(f[3]), lrelu(),
            Conv(f[3], 1, 4, 1, 1, bias=True))

    def forward(self, condition, image):
        return self.net(torch.cat([condition, image], dim=1))


def set_bf16(module, on):
    for m in module.modules():
        if isinstance(m, (Conv, ConvT)):
            m.bf16 = on


def bn_buffers(module):
    return flat([t for m in module.modules() if isinstance(m, nn.BatchNorm2d)
                 for t in (m.running_mean, m.running_var)])


def build_pix2pix(dtype, bf16):
    G, D = UNet(P2P_SIZE, P2P_NGF), PatchGan(P2P_NDF)
    g_layout, d_layout = param_layout(G), param_layout(D)
    set_flat(list(G.parameters()), torch.from_numpy(recipe_params(P2P_G_SEED, g_layout)).double())
    set_flat(list(D.parameters()), torch.from_numpy(recipe_params(P2P_D_SEED, d_layout)).double())
    G.to(dtype).train()
    D.to(dtype).train()
    set_bf16(G, bf16)
    set_bf16(D, bf16)
    return G, D, g_layout, d_layout


def pix2pix_step(G, D, x, y):
    """One shared forward; D's gradient of the halved BCE sum, G's of BCE + L1 term."""
    dtype = next(G.parameters()).dtype
    x, y = x.to(dtype), y.to(dtype)
    fake = G(x)
    real_logits = D(x, y)
    fake_logits = D(x, fake)
    d_loss = 0.5 * (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                    + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    g_gan = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
    g_l1 = (fake - y).abs().mean()
    g_loss = g_gan + P2P_L1 * g_l1
    g_grads = torch.autograd.grad(g_loss, list(G.parameters()), retain_graph=True)
    d_grads = torch.autograd.grad(d_loss, list(D.parameters()))
    return dict(fake=fake, real_logits=real_logits, fake_logits=fake_logits, d_loss=d_loss, g_loss=g_loss,
                g_l1=g_l1, g_grads=flat(g_grads), d_grads=flat(d_grads))


def write_pix2pix_steps():
    torch.manual_seed(2468)
    rows = (torch.rand(P2P_BATCH, 7, P2P_SIZE, P2P_SIZE) * 2 - 1).float()
    x, y = rows[:, :4], rows[:, 4:]
    for case, bf16 in (("pix2pix_step", False), ("pix2pix_step_bf16", True)):
        os.makedirs(os.path.join(GOLDEN, case), exist_ok=True)
        G, D, g_layout, d_layout = build_pix2pix(torch.float64, bf16)
        g_before, d_before = f32(bn_buffers(G)), f32(bn_buffers(D))
        out = pix2pix_step(G, D, x, y)
        g_idx, d_idx = subsample_indices(G, g_layout), subsample_indices(D, d_layout)
        save(case, "rows.npy", rows.numpy())
        save(case, "fake.npy", f32(out["fake"]))
        save(case, "real_logits.npy", f32(out["real_logits"]))
        save(case, "fake_logits.npy", f32(out["fake_logits"]))
        save(case, "losses.npy", np.array([out["d_loss"].item(), out["g_loss"].item(), out["g_l1"].item()],
                                          np.float32))
        save(case, "g_layout.npy", np.array(g_layout, dtype=np.float64))
        save(case, "d_layout.npy", np.array(d_layout, dtype=np.float64))
        save(case, "g_indices.npy", g_idx.astype(np.float64))
        save(case, "d_indices.npy", d_idx.astype(np.float64))
        save(case, "g_grads.npy", f32(out["g_grads"][g_idx]))
        save(case, "d_grads.npy", f32(out["d_grads"][d_idx]))
        save(case, "g_buffers.npy", g_before)
        save(case, "d_buffers.npy", d_before)
        save(case, "g_buffers_after.npy", f32(bn_buffers(G)))
        save(case, "d_buffers_after.npy", f32(bn_buffers(D)))
        print(f"{case}: G {sum(n for _, n, _ in g_layout)} params, D {sum(n for _, n, _ in d_layout)}, "
              f"logits {tuple(out['real_logits'].shape)}, d_loss {out['d_loss'].item():.6f} "
              f"g_loss {out['g_loss'].item():.6f}")

        # Yardsticks: float32 torch (same arithmetic) against these goldens.
        G32, D32, _, _ = build_pix2pix(torch.float32, bf16)
        o32 = pix2pix_step(G32, D32, x, y)
        for what in ("fake", "real_logits", "fake_logits"):
            err = (o32[what].double() - out[what]).abs().max().item()
            print(f"  float32 torch {what:<12} max|diff| {err:.3e} (max|ref| {out[what].abs().max().item():.3e})")
        for net, idx in (("g", g_idx), ("d", d_idx)):
            layout = g_layout if net == "g" else d_layout
            worst = 0.0
            for offset, numel, _ in layout:
                ref = out[net + "_grads"][offset:offset + numel]
                err = (o32[net + "_grads"][offset:offset + numel].double() - ref).abs().max().item()
                worst = max(worst, err / max(ref.abs().max().item(), 1e-30))
            print(f"  float32 torch {net}_grads worst tensor max|diff| / max|ref| {worst:.3e}")
        if bf16:  # how far bf16 arithmetic is from fp32: what the bf16 test must tell apart
            Gf, Df, _, _ = build_pix2pix(torch.float64, False)
            of = pix2pix_step(Gf, Df, x, y)
            print(f"  fp64 without bf16 rounding vs bf16: fake max|diff| "
                  f"{(of['fake'] - out['fake']).abs().max().item():.3e}")


# --------------------------------------------------------------------------- KID

KID_STREAM = 0x6B6964  # "kid": worker/eval/kernel_inception_distance.cc's kKidStream


class GantryRng:
    """gantry's Rng (worker/tensor/random.h), on Python integers: SplitMix64, Below(n) =
    NextU64() % n. Redraws the KID subsets the C++ code draws."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next_u64() % n if n else 0


def mix64(x):
    return int(splitmix64(np.array([x & MASK64], dtype=np.uint64))[0])


def kid_subsets(n_x, n_y, subsets, subset_size, seed):
    """DrawKidSubsets: per subset, m rows of x then m of y, each the first m places of a
    partial Fisher-Yates shuffle."""
    m = min(subset_size, n_x, n_y)
    rng = GantryRng(mix64(seed ^ KID_STREAM))

    def draw(n):
        order = list(range(n))
        for i in range(m):
            j = i + rng.below(n - i)
            order[i], order[j] = order[j], order[i]
        return order[:m]

    out = []
    for _ in range(subsets):
        sx = draw(n_x)
        out.append((sx, draw(n_y)))
    return out


def polynomial_mmd2(x, y):
    """Unbiased MMD^2 with k(a, b) = (a.b / d + 1)^3, as Bińkowski et al.'s reference
    compute_scores.py (and torch-fidelity) compute it for one subset."""
    d, m = x.shape[1], x.shape[0]
    k_xx = (x @ x.T / d + 1) ** 3
    k_yy = (y @ y.T / d + 1) ** 3
    k_xy = (x @ y.T / d + 1) ** 3
    within = (k_xx.sum() - k_xx.diagonal().sum() + k_yy.sum() - k_yy.diagonal().sum()) / (m * (m - 1))
    return within - 2 * k_xy.sum() / (m * m)


def write_kid_case():
    """Feature rows x [300, 24] and y [220, 24] (float32) and, per case (subsets, subset
    size, seed), KID and its spread (torch.std with unbiased=False, numpy's ddof 0) over
    the subsets gantry draws, computed in float64."""
    os.makedirs(os.path.join(GOLDEN, "kid"), exist_ok=True)
    torch.manual_seed(1357)
    x = (torch.randn(300, 24) * 0.9 + 0.4).float()
    y = (torch.randn(220, 24) * 1.1 + 0.5).float()
    cases = [(10, 1000, 1), (25, 60, 7), (100, 1000, 3)]
    results = []
    for subsets, size, seed in cases:
        mmds = torch.stack([polynomial_mmd2(x.double()[sx], y.double()[sy])
                            for sx, sy in kid_subsets(300, 220, subsets, size, seed)])
        results.append([mmds.mean().item(), mmds.std(unbiased=False).item()])
        print(f"kid: {subsets} subsets of {min(size, 220)}, seed {seed}: KID {results[-1][0]:.6e} "
              f"(std {results[-1][1]:.3e})")
    save("kid", "x.npy", x.numpy())
    save("kid", "y.npy", y.numpy())
    save("kid", "cases.npy", np.array(cases, dtype=np.float64))
    save("kid", "kid.npy", np.array(results, dtype=np.float32))


def main():
    global GOLDEN
    parser = argparse.ArgumentParser(description="Regenerates the PyTorch goldens.")
    parser.add_argument("--out", default=GOLDEN,
                        help="folder to write the .npy files into (default tests/golden)")
    GOLDEN = os.path.abspath(parser.parse_args().out)
    torch.set_num_threads(1)  # reductions in a fixed order
    ref = load_reference()
    # Stale arrays go; hand-written files (README.md) stay, and so do the folders other
    # scripts write (image_resize: scripts/make_image_goldens.py, from PIL).
    for d, _, files in os.walk(GOLDEN):
        if os.path.relpath(d, GOLDEN).split(os.sep)[0] in OTHER_SCRIPTS_FOLDERS:
            continue
        for f in files:
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))
    os.makedirs(GOLDEN, exist_ok=True)
    write_layer_cases()
    write_diff_augment()
    write_dcgan_step(ref)
    write_pix2pix_steps()
    write_image_dcgan_step()
    write_kid_case()
    total = sum(os.path.getsize(os.path.join(d, f))
                for d, _, files in os.walk(GOLDEN) for f in files)
    print(f"wrote {GOLDEN} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
