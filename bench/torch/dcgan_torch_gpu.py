#!/usr/bin/env python3
"""PyTorch DCGAN training-throughput benchmark, CPU or CUDA (port of dcgan_torch.py).

The yardstick that gantry-bench-step --device cuda is compared with. It is a
self-contained port of the project's CPU reference,
shared/reference/dcgan_torch.py, to a selectable device, with several batch
sizes per run (one table row each). Model, initialisation, loss, optimizer,
per-step sequence and synthetic data are the reference's; only the device,
the timing (which must synchronise with the GPU) and the table differ.

Model (MNIST-sized, 1x28x28 images, noise dimension 100), as in the reference
  Generator
    Linear(100 -> 7*7*256, no bias) -> BatchNorm1d -> LeakyReLU(0.3)
    reshape to 256x7x7
    ConvTranspose2d(256 -> 128, k5, s1, p2, no bias)       -> BatchNorm2d -> LeakyReLU(0.3)   7x7
    ConvTranspose2d(128 -> 64, k5, s2, p2, op1, no bias)   -> BatchNorm2d -> LeakyReLU(0.3)   14x14
    ConvTranspose2d(64 -> 1, k5, s2, p2, op1, no bias)     -> tanh                           28x28
  Discriminator
    Conv2d(1 -> 64, k5, s2, p2)   -> LeakyReLU(0.3) -> Dropout(0.3)                        14x14
    Conv2d(64 -> 128, k5, s2, p2) -> LeakyReLU(0.3) -> Dropout(0.3)                        7x7
    Flatten(6272) -> Linear(6272 -> 1)
  Parameters: G 2,305,472 + D 212,865 = 2,518,337 (BatchNorm running stats excluded).
  Keras defaults: LeakyReLU 0.3, BatchNorm eps 1e-3 / momentum 0.99 (PyTorch 0.01),
  Adam(lr 1e-4, eps 1e-7), Glorot-uniform kernels, zero biases.

Training step (the reference's train_step, unchanged)
  z ~ N(0, 1), shape (batch, 100), drawn on the device each step
  fake = G(z); real_logits = D(real); fake_logits = D(fake)
  g_loss = BCEWithLogits(fake_logits, 1)
  d_loss = BCEWithLogits(real_logits, 1) + BCEWithLogits(fake_logits, 0)
  g_loss.backward(inputs=G params, retain_graph=True); d_loss.backward(inputs=D params)
  Adam step on G, then on D

Precision
  fp32: plain float32. On CUDA, TF32 is switched OFF for matmuls and cuDNN
        (torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 =
        False; on torch >= 2.9 the equivalent fp32_precision = "ieee" settings) so that
        "fp32" means IEEE fp32 products, as in gantry's CUDA backend (cuBLAS fp32
        without TF32). --allow-tf32 turns it on, and the header says which.
  bf16: torch.autocast(device_type, dtype=torch.bfloat16) around the forward pass;
        weights (fp32 master weights), optimizer state and the losses stay float32.
        TF32 stays off here too unless --allow-tf32 (it only matters for the ops that
        autocast leaves in fp32).

Synthetic data and seeds (as the reference with one rank)
  torch.manual_seed(seed) -> build G, D, Glorot init (on the CPU, so the initial weights
  are the reference's bit for bit), then move them to the device;
  torch.manual_seed(seed + 1000) -> a pool of 4 real batches, uniform in [-1, 1), made on
  the CPU and copied to the device once; step i uses pool[i % 4]. Each batch size starts
  afresh (new model and optimizer, same seeds), like one run of the reference.
  Noise is drawn with torch.randn on the device inside the step (on the CPU that is the
  reference's very call; on CUDA the values differ but no host-to-device copy is timed).

Timing
  --warmup untimed steps (cuDNN autotuning with cudnn.benchmark, oneDNN kernel builds),
  then --steps timed steps (--steps 0: as many as fill about --seconds, judged from the
  warm-up, as in the reference).
  CPU:  wall clock (time.perf_counter) around each step and the whole loop; CPU ops are
        synchronous.
  CUDA: torch.cuda.synchronize() before and after the timed loop, so the elapsed wall
        time covers all the GPU work; per-step times come from CUDA events recorded
        between consecutive steps (no host sync inside the loop, so the CPU may queue the
        next step's launches while the GPU works, as in a real training loop).
  samples/s = batch * steps / elapsed (the reference's throughput); samples/s@med =
  batch / median step (how gantry-bench-step computes its samples/s column).
  GFLOP/s = samples/s * 451.7 MFLOP (see FLOPS_PER_SAMPLE).

Examples
  python3 bench/torch/dcgan_torch_gpu.py --batch-size 64,128,256,512 --precision fp32
  python3 bench/torch/dcgan_torch_gpu.py --batch-size 64,128,256,512 --precision bf16
  /usr/bin/python3 bench/torch/dcgan_torch_gpu.py --device cpu --batch-size 16,32 --warmup 1 --steps 2
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

NOISE_DIM = 100
IMAGE_SHAPE = (1, 28, 28)
LEAKY_SLOPE = 0.3          # Keras LeakyReLU default alpha
BN_EPS = 1e-3              # Keras BatchNormalization default epsilon
BN_MOMENTUM = 0.01         # Keras momentum 0.99 in PyTorch's convention
DROPOUT = 0.3
LEARNING_RATE = 1e-4
ADAM_EPS = 1e-7            # Keras Adam default epsilon
POOL_BATCHES = 4           # real batches cycled through, as in the reference

# Multiply-accumulates per sample of one training step: G forward (51.7 M), D forward on
# real and fake (2 x 10.4 M), the generator tape (10.4 M + 102.2 M) and the discriminator
# tape (2 x 20.4 M). The same constant as shared/reference/dcgan_torch.py
# (MACS_PER_SAMPLE, counted from the executed ops by its --count-flops) and
# shared/reference/README.md ("One DCGAN training sample: 451.7 MFLOP"), and as
# kFlopsPerSample in bench/step_throughput.cc.
MACS_PER_SAMPLE = 225_835_904
FLOPS_PER_SAMPLE = 2 * MACS_PER_SAMPLE


# --------------------------------------------------------------------------- model

class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(NOISE_DIM, 7 * 7 * 256, bias=False)
        self.bn0 = nn.BatchNorm1d(7 * 7 * 256, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv1 = nn.ConvTranspose2d(256, 128, 5, stride=1, padding=2, bias=False)
        self.bn1 = nn.BatchNorm2d(128, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv2 = nn.ConvTranspose2d(128, 64, 5, stride=2, padding=2,
                                          output_padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.deconv3 = nn.ConvTranspose2d(64, 1, 5, stride=2, padding=2,
                                          output_padding=1, bias=False)

    def forward(self, z):
        x = F.leaky_relu(self.bn0(self.fc(z)), LEAKY_SLOPE)
        x = x.view(-1, 256, 7, 7)
        x = F.leaky_relu(self.bn1(self.deconv1(x)), LEAKY_SLOPE)   # 128x7x7
        x = F.leaky_relu(self.bn2(self.deconv2(x)), LEAKY_SLOPE)   # 64x14x14
        return torch.tanh(self.deconv3(x))                         # 1x28x28


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 64, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2d(64, 128, 5, stride=2, padding=2)
        self.drop = nn.Dropout(DROPOUT)
        self.fc = nn.Linear(128 * 7 * 7, 1)

    def forward(self, x):
        x = self.drop(F.leaky_relu(self.conv1(x), LEAKY_SLOPE))    # 64x14x14
        x = self.drop(F.leaky_relu(self.conv2(x), LEAKY_SLOPE))    # 128x7x7
        return self.fc(torch.flatten(x, 1))                        # logits, (batch, 1)


def keras_init_(module):
    """Glorot-uniform kernels and zero biases, as Keras initialises them."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


def count_params(module):
    return sum(p.numel() for p in module.parameters())


# --------------------------------------------------------------------------- training step

def make_autocast(precision, device_type):
    if precision == "bf16":
        return lambda: torch.autocast(device_type=device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext


def train_step(G, D, g_opt, d_opt, real, autocast):
    """One step of the TF tutorial's train_step (the reference's, noise on real's device)."""
    z = torch.randn(real.shape[0], NOISE_DIM, device=real.device)
    with autocast():
        fake = G(z)
        real_logits = D(real)
        fake_logits = D(fake)
    real_logits = real_logits.float()
    fake_logits = fake_logits.float()
    g_loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
    d_loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
              + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))

    g_opt.zero_grad(set_to_none=True)
    d_opt.zero_grad(set_to_none=True)
    # "Generator tape": d g_loss / d G, through D's fake branch (input gradients only)
    # and G; the shared forward's graph is kept for the second pass.
    g_loss.backward(inputs=list(G.parameters()), retain_graph=True)
    # "Discriminator tape": d d_loss / d D, through both D branches, not into G.
    d_loss.backward(inputs=list(D.parameters()))
    g_opt.step()
    d_opt.step()
    return g_loss.detach(), d_loss.detach()


# --------------------------------------------------------------------------- benchmark

def percentile_sorted(xs_sorted, q):
    """The reference's percentile: element int(q * (n - 1)) of the sorted list."""
    return xs_sorted[int(q * (len(xs_sorted) - 1))]


def measure(args, device, batch):
    """Builds a fresh model for `batch`, runs warm-up and timed steps; returns a dict."""
    torch.manual_seed(args.seed)                   # the reference's initial weights
    G, D = Generator(), Discriminator()
    keras_init_(G)
    keras_init_(D)
    G.to(device).train()
    D.to(device).train()
    g_opt = torch.optim.Adam(G.parameters(), lr=LEARNING_RATE, eps=ADAM_EPS)
    d_opt = torch.optim.Adam(D.parameters(), lr=LEARNING_RATE, eps=ADAM_EPS)
    autocast = make_autocast(args.precision, device.type)

    torch.manual_seed(args.seed + 1000)            # the reference's rank-0 data seed
    pool = [(torch.rand(batch, *IMAGE_SHAPE) * 2 - 1).to(device) for _ in range(POOL_BATCHES)]
    cuda = device.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize(device)

    if cuda:
        torch.cuda.reset_peak_memory_stats(device)

    warm_times = []
    for i in range(args.warmup):
        sync()
        t0 = time.perf_counter()
        train_step(G, D, g_opt, d_opt, pool[i % POOL_BATCHES], autocast)
        sync()
        warm_times.append(time.perf_counter() - t0)

    steps = args.steps
    if steps <= 0:       # fill about --seconds, judged from the last warm-up steps
        per_step = statistics.median(warm_times[-3:]) if warm_times else 0.1
        steps = max(2, math.ceil(args.seconds / max(per_step, 1e-6)))

    times = []
    if cuda:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        sync()
        start = time.perf_counter()
        events[0].record()
        for i in range(steps):
            g_loss, d_loss = train_step(G, D, g_opt, d_opt, pool[i % POOL_BATCHES], autocast)
            events[i + 1].record()
        sync()
        elapsed = time.perf_counter() - start
        times = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(steps)]
    else:
        start = time.perf_counter()
        for i in range(steps):
            t0 = time.perf_counter()
            g_loss, d_loss = train_step(G, D, g_opt, d_opt, pool[i % POOL_BATCHES], autocast)
            times.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start

    times_sorted = sorted(times)
    med = statistics.median(times)
    sps = batch * steps / elapsed
    res = {
        "bench": "dcgan_torch_gpu", "torch": torch.__version__, "device": device.type,
        "device_name": device_name(device), "precision": args.precision,
        "tf32": tf32_state(device), "batch": batch, "warmup": args.warmup, "steps": steps,
        "elapsed_s": round(elapsed, 4),
        "samples_per_s": round(sps, 2),
        "samples_per_s_from_median_step": round(batch / med, 2),
        "step_ms_median": round(med * 1e3, 4),
        "step_ms_min": round(times_sorted[0] * 1e3, 4),
        "step_ms_p90": round(percentile_sorted(times_sorted, 0.9) * 1e3, 4),
        "step_ms_max": round(times_sorted[-1] * 1e3, 4),
        "gflops": round(sps * FLOPS_PER_SAMPLE / 1e9, 2),
        "g_loss": round(float(g_loss), 4), "d_loss": round(float(d_loss), 4),
    }
    if cuda:
        res["peak_mem_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
        res["cudnn_benchmark"] = torch.backends.cudnn.benchmark
        res["cudnn_enabled"] = torch.backends.cudnn.enabled
    else:
        res["threads"] = torch.get_num_threads()
    del G, D, g_opt, d_opt, pool
    if cuda:
        torch.cuda.empty_cache()
    return res


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


# TF32 on or off for fp32 matmuls (cuBLAS) and convolutions (cuDNN). torch >= 2.9 has
# the fp32_precision settings ("ieee" / "tf32") and deprecates allow_tf32; mixing the two
# APIs is not supported, so only one family is used: the new one where it exists.
def _new_tf32_api():
    return (hasattr(torch.backends.cuda.matmul, "fp32_precision")
            and hasattr(getattr(torch.backends.cudnn, "conv", None), "fp32_precision"))


def set_tf32(enabled):
    if _new_tf32_api():
        mode = "tf32" if enabled else "ieee"
        torch.backends.cuda.matmul.fp32_precision = mode
        torch.backends.cudnn.conv.fp32_precision = mode
    else:
        torch.backends.cuda.matmul.allow_tf32 = enabled
        torch.backends.cudnn.allow_tf32 = enabled


def tf32_description():
    if _new_tf32_api():
        return (f"matmul.fp32_precision={torch.backends.cuda.matmul.fp32_precision!r}, "
                f"cudnn.conv.fp32_precision={torch.backends.cudnn.conv.fp32_precision!r}")
    return (f"torch.backends.cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}, "
            f"torch.backends.cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}")


def tf32_state(device):
    if device.type != "cuda":
        return None
    if _new_tf32_api():
        return (torch.backends.cuda.matmul.fp32_precision == "tf32"
                or torch.backends.cudnn.conv.fp32_precision == "tf32")
    return bool(torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32)


def header(args, device):
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        tf32 = (f"TF32 {'ON (--allow-tf32)' if tf32_state(device) else 'OFF'} "
                f"for fp32 matmuls and convolutions ({tf32_description()})")
        cudnn = (f"cudnn {torch.backends.cudnn.version()}" if torch.backends.cudnn.enabled
                 else "cudnn disabled (--no-cudnn)")
        return [
            f"dcgan_torch_gpu | device cuda:{device.index or 0} {torch.cuda.get_device_name(device)} "
            f"({props.total_memory / 2**30:.0f} GiB, {props.multi_processor_count} SMs) | "
            f"torch {torch.__version__} | CUDA {torch.version.cuda} | {cudnn} | "
            f"precision {args.precision}",
            f"  {tf32}; cudnn.benchmark {torch.backends.cudnn.benchmark}; "
            f"timing: CUDA events per step, synchronize around the timed loop",
        ]
    cudnn_v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return [
        f"dcgan_torch_gpu | device cpu ({device_name(device)}) | torch {torch.__version__} | "
        f"cudnn {cudnn_v} | precision {args.precision} | {torch.get_num_threads()} thread(s)",
        "  timing: wall clock per step (CPU ops are synchronous)",
    ]


def parse_batches(text):
    try:
        batches = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma list of integers, got {text!r}")
    if not batches or any(b <= 0 for b in batches):
        raise argparse.ArgumentTypeError(f"batch sizes must be positive, got {text!r}")
    return batches


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    p.add_argument("--device", choices=["cpu", "cuda"], default=default_device,
                   help=f"where to train (default here: {default_device})")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--batch-size", type=parse_batches, default=[64, 128, 256, 512],
                   help="batch sizes, comma-separated (default 64,128,256,512)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps (default 5)")
    p.add_argument("--steps", type=int, default=0,
                   help="timed steps; 0 (default) = as many as fill --seconds")
    p.add_argument("--seconds", type=float, default=10.0,
                   help="target timed duration per batch size when --steps is 0 (default 10)")
    p.add_argument("--threads", type=int, default=None,
                   help="intra-op CPU threads (default: 1 on --device cpu, torch's own on cuda)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="append one JSON line per batch size to FILE")
    p.add_argument("--allow-tf32", action="store_true",
                   help="CUDA: allow TF32 in fp32 matmuls/convolutions (off by default)")
    p.add_argument("--no-cudnn-benchmark", action="store_true",
                   help="CUDA: keep cudnn.benchmark off (default on: autotuned in warm-up)")
    p.add_argument("--no-cudnn", action="store_true",
                   help="CUDA: disable cuDNN (PyTorch's own im2col + cuBLAS convolutions)")
    args = p.parse_args()
    if args.warmup < 0:
        p.error("--warmup must be >= 0")

    if args.device == "cuda":
        if not torch.cuda.is_available():
            built = torch.version.cuda
            why = (f"this torch {torch.__version__} is built without CUDA" if built is None else
                   f"torch {torch.__version__} (CUDA {built}) sees no CUDA device")
            print(f"dcgan_torch_gpu: --device cuda asked, but {why}; "
                  f"use --device cpu (or a torch with CUDA on a machine with a GPU)",
                  file=sys.stderr)
            return 2
        device = torch.device("cuda", torch.cuda.current_device())
        set_tf32(args.allow_tf32)
        torch.backends.cudnn.enabled = not args.no_cudnn
        torch.backends.cudnn.benchmark = not args.no_cudnn_benchmark
        if args.threads is not None:
            torch.set_num_threads(args.threads)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(args.threads if args.threads is not None else 1)

    for line in header(args, device):
        print(line)
    print(f"  model: G {count_params(Generator()):,} + D {count_params(Discriminator()):,} "
          f"parameters; {FLOPS_PER_SAMPLE / 1e6:.1f} MFLOP/sample/step; "
          f"{args.warmup} warm-up, "
          + (f"{args.steps} timed steps" if args.steps > 0 else f"~{args.seconds:g} s timed")
          + " per batch size")
    print(f"{'batch':>6} {'steps':>6} {'median_ms':>10} {'p90_ms':>9} {'min_ms':>9} "
          f"{'samples/s':>11} {'samples/s@med':>14} {'GFLOP/s':>9} {'G_loss':>7} {'D_loss':>7}"
          + (f" {'peak_MiB':>9}" if device.type == "cuda" else ""))
    sys.stdout.flush()
    for batch in args.batch_size:
        r = measure(args, device, batch)
        print(f"{batch:>6} {r['steps']:>6} {r['step_ms_median']:>10.3f} {r['step_ms_p90']:>9.3f} "
              f"{r['step_ms_min']:>9.3f} {r['samples_per_s']:>11.1f} "
              f"{r['samples_per_s_from_median_step']:>14.1f} {r['gflops']:>9.1f} "
              f"{r['g_loss']:>7.4f} {r['d_loss']:>7.4f}"
              + (f" {r['peak_mem_mib']:>9.1f}" if device.type == "cuda" else ""))
        sys.stdout.flush()
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
