#!/usr/bin/env python3
"""Writes a tiny digit set in MNIST's IDX format, so that a shell test needs no dataset
package: DIR/train-* with TRAIN images (default 64) and DIR/t10k-* with 16, 28x28, pixel
p of image i is (7 i + p) mod 256 and its label i mod 10 (deterministic, no randomness).

    python3 tests/testing/tiny_mnist.py DIR [TRAIN]
"""
import os
import struct
import sys


def write(folder, train_count):
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", train_count), ("t10k", 16)):
        with open(os.path.join(folder, prefix + "-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, count, 28, 28))
            f.write(bytes((i * 7 + p) % 256 for i in range(count) for p in range(784)))
        with open(os.path.join(folder, prefix + "-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, count) + bytes(i % 10 for i in range(count)))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    write(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 64)
