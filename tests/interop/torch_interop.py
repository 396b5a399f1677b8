#!/usr/bin/env python3
"""PyTorch interop end to end (docs/export.md): what gantry generates, PyTorch generates too.

For a tiny DCGAN (Fashion-MNIST), a tiny image DCGAN (32 px colour images the test
draws, --dataset images) and a tiny Pix2Pix (a flow case), trained a few steps:
`gantry-worker generate` writes samples and the generator inputs it used; `gantry-worker
export` writes the generator as a safetensors state_dict; bench/torch/gantry_safetensors.py
loads it into the PyTorch twin (dcgan_model.py, image_dcgan_model.py, pix2pix_model.py), feeds the same inputs
and must get the same samples: within fp32 round-off, and for bf16 (generate --precision
bf16, export --dtype bf16) within the bound bf16's 8-bit significand allows. Any NaN or
infinity fails. Then weights made by PyTorch (a freshly initialised twin) and an export
start gantry runs through train --init-from.

    torch_interop.py GANTRY_WORKER
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "torch"))
import gantry_safetensors as gs  # noqa: E402
import torch  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"
# fp32: the two sides sum the same products in different orders (oneDNN's blocking vs
# PyTorch's); over at most 6,400-term sums through four layers that moves a tanh output
# by far less than this (measured: below 1e-7 on these tiny runs, 1.2e-6 on a DCGAN
# trained 3 epochs on Fashion-MNIST).
FP32_MAX_ABS = 5e-5
# bf16: gantry rounds every product's operands (weights and activations) to 8 significant
# bits, relative error up to 2^-9 each, where PyTorch multiplies the bf16-rounded weights
# with fp32 activations; through four layers that stays within a few hundredths of a
# tanh output, far less on average (measured: 3e-4 at most and 5e-5 on average on these
# tiny runs; 0.02 and 9e-4 on a DCGAN trained 3 epochs on Fashion-MNIST).
BF16_MAX_ABS = 0.05
BF16_MEAN_ABS = 0.005


def fail(message):
    sys.exit(f"FAIL: {message}")


def worker(*args, expect=0):
    result = subprocess.run([WORKER, *args], capture_output=True, text=True, timeout=600)
    if result.returncode != expect:
        fail(f"gantry-worker {' '.join(args)} exited {result.returncode}, not {expect}:\n"
             f"{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def compare(what, gantry, torch_out, max_abs, mean_abs=None):
    """Fails unless both are finite and within the bounds (NaN compares false: it fails)."""
    for side, values in (("gantry", gantry), ("torch", torch_out)):
        if not np.all(np.isfinite(values)):
            fail(f"{what}: {side}'s output holds NaN or infinity")
    if gantry.shape != torch_out.shape:
        fail(f"{what}: gantry's shape {gantry.shape}, torch's {torch_out.shape}")
    diff = np.abs(gantry.astype(np.float64) - torch_out.astype(np.float64))
    worst, mean = float(diff.max()), float(diff.mean())
    print(f"{what}: max |gantry - torch| {worst:.3g} (bound {max_abs:g}), mean {mean:.3g}")
    if not worst <= max_abs or (mean_abs is not None and not mean <= mean_abs):
        fail(f"{what}: gantry and torch differ by up to {worst:.3g} (mean {mean:.3g})")
    if float(np.abs(torch_out).max()) < 1e-3:
        fail(f"{what}: the outputs are all near zero: the comparison would prove nothing")


def torch_run(weights, inputs, out):
    module = gs.load(weights)
    with torch.no_grad():
        y = module(torch.from_numpy(np.load(inputs)))
    np.save(out, y.numpy())
    return y.numpy()


def check_pair(tmp, name, run, generate_args):
    """generate fp32 and bf16, export fp32 and bf16, and compare each with torch."""
    samples = {}
    for precision in ("fp32", "bf16"):
        out = os.path.join(tmp, f"{name}-gen-{precision}")
        worker("generate", "--run", run, "--out", out, "--precision", precision, *generate_args)
        weights = os.path.join(tmp, f"{name}-g-{precision}.safetensors")
        worker("export", "--run", run, "--format", "safetensors", "--dtype", precision, "--out", weights)
        gantry = samples[precision] = np.load(os.path.join(out, "samples.npy"))
        theirs = torch_run(weights, os.path.join(out, "inputs.npy"), os.path.join(tmp, f"{name}-torch-{precision}.npy"))
        if precision == "fp32":
            compare(f"{name} fp32", gantry, theirs, FP32_MAX_ABS)
        else:
            compare(f"{name} bf16", gantry, theirs, BF16_MAX_ABS, BF16_MEAN_ABS)
    if np.array_equal(samples["fp32"], samples["bf16"]):
        fail(f"{name}: generate --precision bf16 gave the fp32 samples: bf16 was not used")
    discriminator = os.path.join(tmp, f"{name}-d.safetensors")
    worker("export", "--run", run, "--format", "safetensors", "--network", "discriminator", "--out", discriminator)
    gs.load(discriminator)  # strict: every key and shape of the twin


def dcgan(tmp):
    run = os.path.join(tmp, "dcgan")
    worker("train", "--model", "dcgan", "--data-dir", FASHION, "--limit-images", "128", "--batch-size", "32",
           "--epochs", "1", "--max-steps", "3", "--quality", "off", "--out", run)
    check_pair(tmp, "dcgan", run, ["--count", "24", "--seed", "7", "--batch", "8"])
    return run


def write_png(path, rgb):
    """An 8-bit RGB PNG of `rgb` ([H, W, 3] uint8), written with zlib alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    h, w, _ = rgb.shape
    raw = b"".join(b"\0" + rgb[y].tobytes() for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def image_dcgan(tmp):
    """Two class folders of 32x32 colour pictures (smooth gradients and a disc, seeded),
    packed and trained a few steps with --ngf 8 --ndf 8."""
    rng = np.random.default_rng(5)
    pictures = os.path.join(tmp, "pictures")
    yy, xx = np.mgrid[0:32, 0:32] / 31.0
    for k in range(16):
        folder = os.path.join(pictures, "discs" if k % 2 else "gradients")
        os.makedirs(folder, exist_ok=True)
        a, b, c = rng.uniform(0, 1, 3)
        rgb = np.stack([a * xx + (1 - a) * yy, b * yy, c * (1 - xx)], axis=-1)
        if k % 2:
            rgb[(xx - rng.uniform(0.3, 0.7)) ** 2 + (yy - rng.uniform(0.3, 0.7)) ** 2 < 0.05] = rng.uniform(0, 1, 3)
        write_png(os.path.join(folder, f"{k:02d}.png"), (rgb * 255).round().astype(np.uint8))
    packed = os.path.join(tmp, "pictures.pack")
    worker("make-dataset", "--from", pictures, "--out", packed, "--image-size", "32")
    run = os.path.join(tmp, "image-dcgan")
    worker("train", "--dataset", "images", "--data-dir", packed, "--ngf", "8", "--ndf", "8", "--batch-size", "8",
           "--epochs", "1", "--max-steps", "3", "--quality", "off", "--out", run)
    check_pair(tmp, "image-dcgan", run, ["--count", "12", "--seed", "7", "--batch", "4"])
    # examples/dcgan's own initialisation, made by PyTorch, starts a gantry run.
    torch.manual_seed(3)
    G = gs.image_dcgan_model.Generator(32, 3, 8)
    G.apply(gs.image_dcgan_model.weights_init)
    made = os.path.join(tmp, "torch-image-g.safetensors")
    gs.write(made, G.state_dict())
    log = worker("train", "--dataset", "images", "--data-dir", packed, "--ngf", "8", "--ndf", "8", "--batch-size", "8",
                 "--epochs", "1", "--max-steps", "1", "--quality", "off", "--init-from", made,
                 "--out", os.path.join(tmp, "init-image"))
    if f"the generator starts from {made}" not in log:
        fail(f"train --dataset images --init-from {made} did not say it loaded the generator:\n{log}")


def pix2pix(tmp):
    data = os.path.join(tmp, "flow")
    worker("make-flow", "--out", os.path.join(data, "case-1"), "--nx", "96", "--ny", "48", "--re", "100",
           "--frames", "10", "--seed", "1")
    run = os.path.join(tmp, "pix2pix")
    worker("train", "--model", "pix2pix", "--dataset", "flow", "--data-dir", data, "--image-size", "32", "--ngf", "8",
           "--ndf", "8", "--batch-size", "4", "--epochs", "1", "--max-steps", "3", "--out", run)
    check_pair(tmp, "pix2pix", run, ["--case", os.path.join(data, "case-1"), "--frame", "2", "--count", "5"])


def init_from(tmp, dcgan_run):
    """Weights made by PyTorch, and an export, start gantry runs."""
    made = os.path.join(tmp, "torch-g.safetensors")
    state_dict, _ = gs.initialised("dcgan", "generator", seed=3)
    gs.write(made, state_dict)  # as PyTorch code would save it: no metadata
    exported = os.path.join(tmp, "dcgan-g-fp32.safetensors")
    for weights in (made, exported):
        log = worker("train", "--model", "dcgan", "--data-dir", FASHION, "--limit-images", "64", "--batch-size", "32",
                     "--epochs", "1", "--max-steps", "1", "--quality", "off", "--init-from", weights,
                     "--out", os.path.join(tmp, "init-" + os.path.basename(weights)))
        if f"the generator starts from {weights}" not in log:
            fail(f"train --init-from {weights} did not say it loaded the generator:\n{log}")
    # A PyTorch state_dict of another shape is refused, by key, before any training.
    tensors, metadata = gs.read(made)
    tensors["fc.weight"] = tensors["fc.weight"][:, :50].contiguous()
    wrong = os.path.join(tmp, "wrong.safetensors")
    gs.write(wrong, tensors, metadata)
    log = worker("train", "--model", "dcgan", "--data-dir", FASHION, "--limit-images", "64", "--batch-size", "32",
                 "--epochs", "1", "--max-steps", "1", "--quality", "off", "--init-from", wrong,
                 "--out", os.path.join(tmp, "init-wrong"), expect=2)
    if "'fc.weight' has shape [12544, 50]" not in log:
        fail(f"the refusal of a wrong shape does not name the tensor:\n{log}")


def main():
    global WORKER
    WORKER = sys.argv[1]
    if not os.path.isdir(FASHION):
        fail(f"no {FASHION} (bash scripts/install_deps.sh installs dataset-fashion-mnist)")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        run = dcgan(tmp)
        image_dcgan(tmp)
        pix2pix(tmp)
        init_from(tmp, run)
    print("PASS")


if __name__ == "__main__":
    main()
