#!/usr/bin/env python3
"""Writes PIL's resampling of a test image into tests/golden/image_resize/, the reference
for make-dataset's Catmull-Rom filter (worker/formats/image_fit.h, "like PIL's").

Run with Debian's interpreter, which has python3-pil and python3-numpy:
    /usr/bin/python3 scripts/make_image_goldens.py            # rewrites tests/golden/image_resize/
    /usr/bin/python3 scripts/make_image_goldens.py --out DIR  # writes the arrays into DIR instead

The input is a 23x17 RGB image of harsh, deterministic noise (every pixel differs from its
neighbours, the hardest case for a filter), value (37x + 101y + 59c + 13xy) mod 256. The
references, each an 8-bit image as PIL returns it, saved as float32 .npy [H, W, C]:
    input.npy     the image
    stretch8.npy  image.resize((8, 8), Image.BICUBIC): a downscale (antialiased)
    stretch40.npy image.resize((40, 40), Image.BICUBIC): an upscale
    crop8.npy     torchvision's Resize(8) + CenterCrop(8), done with PIL: the short side
                  to 8, the long to int(8 * 23 / 17) = 10, then the centre 8 columns
PIL computes in 8-bit fixed point with an 8-bit image between its horizontal and vertical
passes, gantry in float: the test allows 1 of difference per value. Deterministic: the
same PIL and numpy give byte-identical files.
"""
import argparse
import os

import numpy as np
from PIL import Image

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "image_resize")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=ROOT)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    w, h = 23, 17
    x, y, c = np.meshgrid(np.arange(w), np.arange(h), np.arange(3), indexing="xy")
    pixels = ((37 * x + 101 * y + 59 * c + 13 * x * y) % 256).astype(np.uint8)  # [h, w, 3]
    image = Image.fromarray(pixels, "RGB")
    resized = image.resize((10, 8), Image.BICUBIC)
    left = int(round((10 - 8) / 2.0))
    arrays = {
        "input": pixels,
        "stretch8": np.asarray(image.resize((8, 8), Image.BICUBIC)),
        "stretch40": np.asarray(image.resize((40, 40), Image.BICUBIC)),
        "crop8": np.asarray(resized.crop((left, 0, left + 8, 8))),
    }
    for name, array in arrays.items():
        np.save(os.path.join(out, name + ".npy"), array.astype("<f4"))
        print(f"{name}.npy {array.shape}")


if __name__ == "__main__":
    main()
