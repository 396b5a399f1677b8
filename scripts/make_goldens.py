#!/usr/bin/env python3
"""Regenerates the PyTorch reference values ("goldens") under tests/golden/.

Run with the interpreter that has Debian's python3-torch, from anywhere:
    /usr/bin/python3 scripts/make_goldens.py
It rewrites every file under tests/golden/ and is deterministic: the same torch and
numpy give byte-identical files. The C++ tests tests/layers/golden_layers_test.cc and
tests/models/dcgan_golden_test.cc read them through tests/testing/golden.h.

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
  dcgan_step: see write_dcgan_step() and tests/golden/dcgan_step/README.md.
"""

import importlib.util
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing the reference must not litter shared/

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "tests", "golden")


def load_reference():
    """Imports the reference model (shared/reference/dcgan_torch.py) by path."""
    candidates = [os.environ.get("GANTRY_REFERENCE", ""),
                  os.path.join(REPO, "shared", "reference", "dcgan_torch.py"),
                  "/work/shared/reference/dcgan_torch.py"]
    for path in candidates:
        if path and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("dcgan_torch", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit("dcgan_torch.py not found; set GANTRY_REFERENCE to its path")


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


def main():
    torch.set_num_threads(1)  # reductions in a fixed order
    ref = load_reference()
    # Stale arrays go; hand-written files (README.md) stay.
    for d, _, files in os.walk(GOLDEN):
        for f in files:
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))
    os.makedirs(GOLDEN, exist_ok=True)
    write_layer_cases()
    write_dcgan_step(ref)
    total = sum(os.path.getsize(os.path.join(d, f))
                for d, _, files in os.walk(GOLDEN) for f in files)
    print(f"wrote {GOLDEN} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
