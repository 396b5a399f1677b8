#!/usr/bin/env python3
"""PyTorch yardstick for gantry's Pix2Pix training step (docs/pix2pix.md).

The networks are gantry's `--model pix2pix`, layer for layer:
  U-Net G (4 -> 3 channels), depth min(log2 S, 8); down block i has ngf * min(2^i, 8)
  filters: Conv 4x4 s2 p1 (no bias) -> norm -> LeakyReLU(0.2), no norm in the first
  block nor in the innermost (bottleneck) one. Up block j: ConvT 4x4 s2 p1 (no bias) ->
  norm -> ReLU -> Dropout(0.5) in the first three, then concatenated with the mirrored
  down block's output. Out: ConvT 4x4 s2 p1 (bias) -> tanh.
  PatchGAN D on concat(condition, image) (7 channels): Conv(ndf) s2 -> LReLU ->
  Conv(2ndf) s2 -> norm -> LReLU -> Conv(4ndf) s2 -> norm -> LReLU -> Conv(8ndf) s1 ->
  norm -> LReLU -> Conv(1) s1 (bias); all 4x4, padding 1; S/8 - 2 logits a side.
  BatchNorm with gantry's Keras conventions (eps 1e-3, momentum 0.99, i.e. torch's
  momentum 0.01); InstanceNorm2d(eps 1e-5, no affine) with --norm instance.
Losses from one shared forward: d = 0.5 (BCE(D(x,y),1) + BCE(D(x,G(x)),0)),
g = BCE(D(x,G(x)),1) + 100 mean|G(x) - y|; the two gradients are two backward passes
restricted with backward(inputs=...) (as bench/torch/dcgan_model.py does), then
Adam(lr 2e-4, betas (0.5, 0.999), eps 1e-7) on each network. Weights N(0, 0.02).

Data: synthetic rows uniform in [-1, 1) (condition 4 channels, target 3), made once per
rank. --batch-size is PER RANK; samples/s counts the global batch (ranks x batch).
--ddp spawns --world-size ranks with gloo DistributedDataParallel, 1 intra-op thread each
by default (the fair setting of bench/torch/README.md: run it through
bench/torch/fair_torch.sh, over Debian's OpenBLAS with OPENBLAS_CORETYPE unset). Step times
are rank 0's, with a barrier before each step so a step covers every rank's.

  /usr/bin/python3 bench/torch/pix2pix_torch.py --image-size 128 --batch-size 1,4 --ddp
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as tmp
import torch.nn as nn
import torch.nn.functional as F

from pix2pix_model import IN_CHANNELS, OUT_CHANNELS, PatchGAN, UNet, init_normal  # noqa: E402


def train_step(G, D, g_opt, d_opt, x, y, autocast, l1_weight):
    g_opt.zero_grad(set_to_none=True)
    d_opt.zero_grad(set_to_none=True)
    with autocast():
        fake = G(x)
        real_logits = D(x, y)
        fake_logits = D(x, fake)
    real_logits, fake_logits, fake = real_logits.float(), fake_logits.float(), fake.float()
    bce = F.binary_cross_entropy_with_logits
    g_loss = bce(fake_logits, torch.ones_like(fake_logits)) + l1_weight * (fake - y).abs().mean()
    d_loss = 0.5 * (bce(real_logits, torch.ones_like(real_logits)) + bce(fake_logits, torch.zeros_like(fake_logits)))
    g_loss.backward(inputs=list(G.parameters()), retain_graph=True)
    d_loss.backward(inputs=list(D.parameters()))
    g_opt.step()
    d_opt.step()
    return g_loss.item(), d_loss.item()


def make_autocast(precision):
    if precision == "bf16":
        return lambda: torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    import contextlib
    return contextlib.nullcontext


def measure(args, batch, rank, world):
    torch.manual_seed(args.seed)
    G, D = UNet(args.image_size, args.ngf, args.norm), PatchGAN(args.ndf, args.norm)
    init_normal(G)
    init_normal(D)
    if world > 1:
        G = nn.parallel.DistributedDataParallel(G, broadcast_buffers=False)
        D = nn.parallel.DistributedDataParallel(D, broadcast_buffers=False)
    g_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999), eps=1e-7)
    d_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999), eps=1e-7)
    gen = torch.Generator().manual_seed(args.seed + 1000 + rank)
    s = args.image_size
    rows = torch.rand(batch, IN_CHANNELS + OUT_CHANNELS, s, s, generator=gen) * 2 - 1
    x, y = rows[:, :IN_CHANNELS].contiguous(), rows[:, IN_CHANNELS:].contiguous()
    autocast = make_autocast(args.precision)
    times, cpu = [], 0.0
    for i in range(args.warmup + args.steps):
        if world > 1:
            dist.barrier()
        c0, t0 = time.process_time(), time.perf_counter()
        losses = train_step(G, D, g_opt, d_opt, x, y, autocast, args.l1_weight)
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
            cpu += time.process_time() - c0
    times.sort()
    median = times[len(times) // 2]
    return {"image_size": s, "ngf": args.ngf, "ndf": args.ndf, "norm": args.norm, "precision": args.precision,
            "batch_per_rank": batch, "ranks": world, "median_ms": median * 1e3,
            "p90_ms": times[min(len(times) - 1, len(times) * 9 // 10)] * 1e3, "cpu_ms": cpu / args.steps * 1e3,
            "samples_per_s": batch * world / median, "g_loss": losses[0], "d_loss": losses[1],
            "g_params": sum(p.numel() for p in G.parameters()), "d_params": sum(p.numel() for p in D.parameters())}


def run(rank, world, args):
    if world > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
    torch.set_num_threads(args.threads)
    root = rank == 0
    if root:
        mode = f"DDP gloo x{world}" if world > 1 else "single process"
        print(f"PyTorch {torch.__version__} Pix2Pix step, {mode} x {args.threads} thread(s), {args.precision}, "
              f"{args.image_size} px, ngf {args.ngf}, ndf {args.ndf}, norm {args.norm}, "
              f"{args.steps} timed steps after {args.warmup} warm-up", flush=True)
        print(f"{'batch':>6} {'ranks':>6} {'median_ms':>11} {'p90_ms':>9} {'cpu_ms':>9} {'samples/s':>11}", flush=True)
    for b in args.batch_size:
        r = measure(args, b, rank, world)
        if root:
            print(f"{b:6d} {world:6d} {r['median_ms']:11.1f} {r['p90_ms']:9.1f} {r['cpu_ms']:9.1f} "
                  f"{r['samples_per_s']:11.2f}", flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
    if world > 1:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--image-size", type=int, default=256)
    p.add_argument("--ngf", type=int, default=64)
    p.add_argument("--ndf", type=int, default=64)
    p.add_argument("--norm", choices=["batch", "instance"], default="batch")
    p.add_argument("--l1-weight", type=float, default=100.0)
    p.add_argument("--batch-size", type=lambda s: [int(v) for v in s.split(",")], default=[1, 4],
                   help="per-rank batch sizes, comma separated")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--ddp", action="store_true", help="DistributedDataParallel over gloo")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--threads", type=int, default=None, help="intra-op threads per process (default 1 with --ddp, else 2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--json", help="append one JSON line per batch size")
    args = p.parse_args()
    s = args.image_size
    if s < 32 or s & (s - 1):
        sys.exit(f"--image-size {s}: a power of two >= 32 is needed")
    if args.threads is None:
        args.threads = 1 if args.ddp else 2
    if args.ddp and args.world_size > 1:
        tmp.spawn(run, args=(args.world_size, args), nprocs=args.world_size, join=True)
    else:
        run(0, 1, args)


if __name__ == "__main__":
    main()
