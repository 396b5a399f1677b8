#!/usr/bin/env python3
"""Trains the PyTorch reference DCGAN (bench/torch/dcgan_model.py) on real MNIST-format
IDX data with the same settings as gantry-worker, so their samples can be compared epoch
by epoch. Writes <out>/samples/epoch_NNN.png (8x8 grid of G in eval mode on a fixed noise
batch, like gantry) and <out>/epochs.csv (epoch, seconds, d_loss, g_loss).

  /usr/bin/python3 scripts/train_reference_mnist.py --data-dir /path/to/mnist \
      --epochs 3 --batch-size 64 --out runs/torch-mnist

--data-dir is a folder with train-images-idx3-ubyte[.gz] (MNIST or Fashion-MNIST). Uses
Debian's python3-torch; bench/torch/README.md ("A fair PyTorch") says how to run it over
OpenBLAS (prefix the command with bench/torch/fair_torch.sh).
"""

import argparse
import contextlib
import gzip
import importlib.util
import os
import struct
import sys
import time
import zlib

import numpy as np
import torch


def load_reference(path):
    sys.dont_write_bytecode = True  # keep __pycache__ out of bench/torch
    spec = importlib.util.spec_from_file_location("dcgan_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_idx_images(data_dir):
    for name in ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as f:
                magic, count, rows, cols = struct.unpack(">IIII", f.read(16))
                if magic != 2051:
                    sys.exit(f"{path}: bad magic {magic}, expected 2051")
                pixels = np.frombuffer(f.read(), dtype=np.uint8)
            return pixels.reshape(count, 1, rows, cols).astype(np.float32) / 127.5 - 1.0
    sys.exit(f"{data_dir}: no train-images-idx3-ubyte[.gz] (use --data-dir)")


def write_png_grid(path, images, columns=8, gap=2):
    """8-bit grayscale PNG of images in [-1,1], mid-grey gaps (as gantry's image_grid)."""
    n, _, h, w = images.shape
    rows = (n + columns - 1) // columns
    height, width = rows * h + (rows - 1) * gap, columns * w + (columns - 1) * gap
    canvas = np.full((height, width), 128, dtype=np.uint8)
    pixels = np.clip((images[:, 0] + 1.0) * 127.5 + 0.5, 0, 255).astype(np.uint8)
    for i in range(n):
        r, c = divmod(i, columns)
        canvas[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = pixels[i]
    raw = b"".join(b"\x00" + canvas[y].tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--beta1", type=float, default=0.5, help="gantry's default; the TF tutorial uses 0.9")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reference", default=os.path.join(here, "..", "bench", "torch", "dcgan_model.py"),
                        help="the model file (default bench/torch/dcgan_model.py)")
    args = parser.parse_args()

    ref = load_reference(args.reference)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    images = torch.from_numpy(read_idx_images(args.data_dir))
    G, D = ref.Generator(), ref.Discriminator()
    ref.keras_init_(G)
    ref.keras_init_(D)
    betas = (args.beta1, 0.999)
    g_opt = torch.optim.Adam(G.parameters(), lr=ref.LEARNING_RATE, betas=betas, eps=ref.ADAM_EPS)
    d_opt = torch.optim.Adam(D.parameters(), lr=ref.LEARNING_RATE, betas=betas, eps=ref.ADAM_EPS)
    fixed_noise = torch.randn(64, ref.NOISE_DIM)
    os.makedirs(os.path.join(args.out, "samples"), exist_ok=True)
    steps = images.shape[0] // args.batch_size
    with open(os.path.join(args.out, "epochs.csv"), "w") as csv:
        csv.write("batch_size,epoch,seconds,d_loss,g_loss\n")
        for epoch in range(1, args.epochs + 1):
            G.train()
            D.train()
            order = torch.randperm(images.shape[0])
            start, d_sum, g_sum = time.time(), 0.0, 0.0
            for step in range(steps):
                real = images[order[step * args.batch_size:(step + 1) * args.batch_size]]
                g_loss, d_loss = ref.train_step(G, D, g_opt, d_opt, real, contextlib.nullcontext)
                d_sum += float(d_loss)
                g_sum += float(g_loss)
                if (step + 1) % 200 == 0:
                    print(f"epoch {epoch} step {step + 1}/{steps} d_loss {d_sum / (step + 1):.4f} "
                          f"g_loss {g_sum / (step + 1):.4f}", flush=True)
            seconds = time.time() - start
            csv.write(f"{args.batch_size},{epoch},{seconds:.1f},{d_sum / steps:.5f},{g_sum / steps:.5f}\n")
            csv.flush()
            G.eval()
            with torch.no_grad():
                write_png_grid(os.path.join(args.out, "samples", f"epoch_{epoch:03d}.png"), G(fixed_noise).numpy())
            print(f"epoch {epoch} done in {seconds:.0f} s", flush=True)


if __name__ == "__main__":
    main()
