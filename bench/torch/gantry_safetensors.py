#!/usr/bin/env python3
"""Gantry's exported networks in PyTorch, and PyTorch weights for gantry (docs/export.md).

`gantry-worker export` writes one network of a trained run as the state_dict of its
PyTorch twin (bench/torch/dcgan_model.py, image_dcgan_model.py, pix2pix_model.py) in a safetensors
file; `gantry-worker train --init-from` reads such files. This module reads and writes
the format itself (the standard library and torch; the safetensors package is not
needed) and rebuilds the twin from the file's __metadata__:

    import gantry_safetensors as gs
    G = gs.load("G.safetensors")            # an nn.Module in eval mode, fp32
    images = G(torch.randn(16, 100))        # DCGAN: [16, 1, 28, 28] in [-1, 1]

Command line (what tests/interop/torch_interop.py runs):
    gantry_safetensors.py run FILE --inputs IN.npy --out OUT.npy    the module on IN
    gantry_safetensors.py init --model dcgan --network generator --seed 1 --out FILE
        a freshly initialised twin's state_dict, for --init-from
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcgan_model  # noqa: E402
import image_dcgan_model  # noqa: E402
import pix2pix_model  # noqa: E402

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64}
NAMES = {v: k for k, v in DTYPES.items()}


def read(path):
    """({name: tensor}, metadata) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    buffer = data[8 + n:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        dtype, shape = DTYPES[entry["dtype"]], entry["shape"]
        raw = bytearray(buffer[begin:end])
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(shape)
    return tensors, metadata


def write(path, tensors, metadata=None):
    """Writes {name: tensor} (and string metadata) as a safetensors file."""
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        raw = t.flatten().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def build(metadata):
    """The PyTorch twin the metadata describes (fp32, not yet loaded)."""
    model, network = metadata["model"], metadata["network"]
    if model == "dcgan" and "image_size" in metadata:  # the image DCGAN (--dataset images)
        size, channels = int(metadata["image_size"]), int(metadata["channels"])
        if network == "generator":
            return image_dcgan_model.Generator(size, channels, int(metadata["ngf"]), int(metadata["noise_dim"]))
        return image_dcgan_model.Discriminator(size, channels, int(metadata["ndf"]))
    if model == "dcgan":
        expected = {"noise_dim": dcgan_model.NOISE_DIM, "leaky_slope": dcgan_model.LEAKY_SLOPE,
                    "bn_eps": dcgan_model.BN_EPS}
        for key, value in expected.items():
            if key in metadata and abs(float(metadata[key]) - value) > 1e-6 * max(1.0, abs(value)):
                raise ValueError(f"a DCGAN with {key} {metadata[key]}: dcgan_model.py builds {value}")
        return dcgan_model.Generator() if network == "generator" else dcgan_model.Discriminator()
    if model == "pix2pix":
        norm_args = {"bn_eps": float(metadata["bn_eps"]), "bn_momentum": float(metadata["bn_momentum"]),
                     "in_eps": float(metadata["in_eps"])}
        slope = float(metadata["leaky_slope"])
        if network == "generator":
            return pix2pix_model.UNet(int(metadata["image_size"]), int(metadata["ngf"]), metadata["norm"],
                                      dropout=float(metadata["dropout"]), slope=slope,
                                      residual=metadata["predict"] == "delta", **norm_args)
        return pix2pix_model.PatchGAN(int(metadata["ndf"]), metadata["norm"], slope=slope, **norm_args)
    raise ValueError(f"no PyTorch twin for model {model!r}")


def load(path):
    """The network of an exported file: its twin with the file's weights, in eval mode."""
    tensors, metadata = read(path)
    module = build(metadata)
    module.load_state_dict({k: (v.float() if v.is_floating_point() else v) for k, v in tensors.items()}, strict=True)
    return module.eval()


def run(args):
    module = load(args.file)
    inputs = torch.from_numpy(np.load(args.inputs).astype(np.float32))
    with torch.no_grad():
        out = module(inputs)
    np.save(args.out, out.numpy().astype(np.float32))


def initialised(model, network, seed=1, image_size=32, ngf=8, ndf=8, predict="delta"):
    """(state_dict, metadata) of a freshly initialised twin (Keras init for the DCGAN,
    N(0, 0.02) for Pix2Pix, drawn after torch.manual_seed(seed)): weights PyTorch made."""
    torch.manual_seed(seed)
    metadata = {"model": model, "network": network}
    if model == "dcgan":
        module = dcgan_model.Generator() if network == "generator" else dcgan_model.Discriminator()
        dcgan_model.keras_init_(module)
    else:
        metadata.update(image_size=image_size, ngf=ngf, ndf=ndf, norm="batch", predict=predict,
                        leaky_slope=pix2pix_model.SLOPE, dropout=0.5, bn_eps=pix2pix_model.BN_EPS,
                        bn_momentum=pix2pix_model.BN_TORCH_MOMENTUM, in_eps=pix2pix_model.IN_EPS)
        module = build(metadata)
        pix2pix_model.init_normal(module)
    return module.state_dict(), metadata


def init(args):
    write(args.out, *initialised(args.model, args.network, args.seed, args.image_size, args.ngf, args.ndf,
                                 args.predict))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an exported network on a .npy of inputs")
    r.add_argument("file")
    r.add_argument("--inputs", required=True)
    r.add_argument("--out", required=True)
    i = sub.add_parser("init", help="write a freshly initialised twin's state_dict (for --init-from)")
    i.add_argument("--model", choices=["dcgan", "pix2pix"], required=True)
    i.add_argument("--network", choices=["generator", "discriminator"], required=True)
    i.add_argument("--seed", type=int, default=1)
    i.add_argument("--image-size", type=int, default=32)
    i.add_argument("--ngf", type=int, default=8)
    i.add_argument("--ndf", type=int, default=8)
    i.add_argument("--predict", choices=["frame", "delta"], default="delta")
    i.add_argument("--out", required=True)
    args = parser.parse_args()
    run(args) if args.command == "run" else init(args)


if __name__ == "__main__":
    main()
