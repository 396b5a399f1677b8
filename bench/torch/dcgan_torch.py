#!/usr/bin/env python3
"""PyTorch DCGAN training-step throughput on the CPU or a CUDA GPU: gantry's yardstick.

The same network, initialisation, losses, optimizer and step as gantry's `--model dcgan`
(bench/torch/dcgan_model.py describes them), timed on synthetic data, one table row per
batch size, so its figures sit beside gantry-bench-step's:

  /usr/bin/python3 bench/torch/dcgan_torch.py --batch-size 64,256,512
  /usr/bin/python3 bench/torch/dcgan_torch.py --ddp --world-size 2 --batch-size 64,256,512
  /usr/bin/python3 bench/torch/dcgan_torch.py --precision bf16 --threads 2 --batch-size 256
  /usr/bin/python3 bench/torch/dcgan_torch.py --count-flops
  /usr/bin/python3 bench/torch/dcgan_torch.py --model image-dcgan --image-size 64 --ddp --batch-size 128
  python3 bench/torch/dcgan_torch.py --device cuda --precision bf16 --warmup 10 --steps 100

Debian's torch runs its transposed convolutions and Linear layers on the reference BLAS;
bench/torch/README.md ("A fair PyTorch") says how to run it over OpenBLAS
(bench/torch/fair_torch.sh), which is how the figures in README.md were taken.

Data parallel (--ddp, CPU only)
  --world-size processes (started here with torch.multiprocessing.spawn; torchrun's
  environment is honoured too), each with --threads intra-op threads, the gloo backend
  and DistributedDataParallel around G and around D. --batch-size is the GLOBAL batch,
  split evenly over the ranks. BatchNorm statistics stay per rank and buffers are not
  broadcast (broadcast_buffers=False), so the gradient all-reduce is the only traffic,
  as in gantry's data parallelism. Every rank starts from the same weights (seed) and
  draws its own data and noise (seed + 1000 + rank).

Seeds
  torch.manual_seed(seed) before building the networks (on the CPU, then moved to the
  device); torch.manual_seed(seed + 1000 + rank) before a pool of 4 real batches; step i
  trains on pool[i % 4] with fresh noise. Every batch size starts afresh with these seeds.

Timing
  --warmup untimed steps (oneDNN and cuDNN choose and build their kernels there), then
  --steps timed steps, or with --steps 0 as many as fill about --seconds judged from the
  last warm-up steps (the largest count of any rank under --ddp).
  CPU: wall clock around each step; with --ddp a barrier on both sides of the timed loop
    and rank 0's step times (CPU operators are synchronous).
  CUDA: a synchronize on both sides of the timed loop and CUDA events between steps (no
    host sync inside the loop, so the launches of a step overlap the GPU's work).
  samples/s = global batch x steps / elapsed; samples/s@med = global batch / median step
  (gantry-bench-step's way); GFLOP/s = samples/s x 451.7 MFLOP (dcgan_model.py).
  On the CPU, "others" is how many cores other processes kept busy during the timed
  steps (/proc/stat): a run beside other work is slower, and this says by how much work.
"""

import argparse
import json
import math
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import cuda_settings
import dcgan_model
import image_dcgan_model
from op_counter import MacCounter

# The model measured: dcgan_model (the 28x28 DCGAN, --model dcgan) or an
# image_dcgan_model.Bench (--model image-dcgan); main() sets it.
model = dcgan_model

POOL_BATCHES = 4


# --------------------------------------------------------------------------- settings

def parse_batches(text):
    try:
        batches = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma list of integers, got {text!r}")
    if not batches or any(b <= 0 for b in batches):
        raise argparse.ArgumentTypeError(f"batch sizes must be positive, got {text!r}")
    return batches


def make_parser(default_device):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    p.add_argument("--model", choices=["dcgan", "image-dcgan"], default="dcgan",
                   help="dcgan: the 28x28 DCGAN (dcgan_model.py); image-dcgan: examples/dcgan's "
                        "network (image_dcgan_model.py), gantry's --dataset images")
    p.add_argument("--image-size", type=int, choices=[32, 64, 128], default=64,
                   help="image-dcgan: the image side (default 64)")
    p.add_argument("--channels", type=int, choices=[1, 2, 3, 4], default=3,
                   help="image-dcgan: colour channels (default 3)")
    p.add_argument("--device", choices=["cpu", "cuda"], default=default_device,
                   help=f"where to train (default {default_device})")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--batch-size", type=parse_batches, default=[64, 128, 256, 512],
                   help="global batch sizes, comma-separated (default 64,128,256,512)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps (default 5)")
    p.add_argument("--steps", type=int, default=0,
                   help="timed steps; 0 (default) = as many as fill --seconds")
    p.add_argument("--seconds", type=float, default=10.0,
                   help="timed duration per batch size when --steps is 0 (default 10)")
    p.add_argument("--threads", type=int, default=None,
                   help="intra-op threads per process (default 1 on the CPU, also per rank "
                        "with --ddp; torch's own choice on CUDA)")
    p.add_argument("--ddp", action="store_true",
                   help="data parallel over gloo, --world-size processes (CPU only)")
    p.add_argument("--world-size", type=int, default=2, help="ranks with --ddp (default 2)")
    p.add_argument("--pin", action="store_true", help="with --ddp: pin rank r to CPU r")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="append one JSON line per batch size to FILE")
    p.add_argument("--count-flops", action="store_true",
                   help="count the multiply-adds of one step (first batch size) and exit")
    p.add_argument("--allow-tf32", action="store_true",
                   help="CUDA: allow TF32 in fp32 matmuls and convolutions (off by default)")
    p.add_argument("--no-cudnn-benchmark", action="store_true",
                   help="CUDA: keep cudnn.benchmark off (default on: autotuned in warm-up)")
    p.add_argument("--no-cudnn", action="store_true",
                   help="CUDA: disable cuDNN (PyTorch's own im2col + cuBLAS convolutions)")
    return p


def settings_error(args):
    """Why these settings cannot run (a sentence naming the flag and the fix), or None."""
    if args.warmup < 0 or args.steps < 0:
        return "--warmup and --steps must be >= 0"
    if args.steps == 0 and args.seconds <= 0:
        return "--seconds must be > 0 when --steps is 0"
    if args.threads is not None and args.threads < 1:
        return "--threads must be >= 1"
    if args.device == "cuda" and not torch.cuda.is_available():
        why = (f"this torch {torch.__version__} is built without CUDA" if torch.version.cuda
               is None else f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU")
        return (f"--device cuda asked, but {why}; use --device cpu (or a torch with CUDA on "
                f"a machine with a GPU)")
    if not args.ddp:
        return None
    if args.device != "cpu":
        return "--ddp runs gloo ranks on the CPU only; drop --ddp or use --device cpu"
    if args.world_size < 1:
        return "--world-size must be >= 1"
    uneven = [b for b in args.batch_size if b % args.world_size]
    if uneven:
        return (f"--batch-size {','.join(map(str, uneven))} does not split evenly over "
                f"--world-size {args.world_size}; use multiples of {args.world_size}")
    return None


# --------------------------------------------------------------------------- measuring

class MachineLoad:
    """CPU seconds the whole machine spent busy, from /proc/stat (Linux; None elsewhere)."""

    @staticmethod
    def busy_seconds():
        try:
            with open("/proc/stat") as f:
                fields = [int(v) for v in f.readline().split()[1:8]]
        except (OSError, ValueError):
            return None
        user, nice, system, _idle, _iowait, irq, softirq = fields
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def ranks_max(value, ddp):
    if not ddp:
        return value
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def ranks_sum(value, ddp):
    if not ddp:
        return value
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item()


def timed_steps_cpu(step, steps, ddp):
    """(per-step seconds, elapsed seconds, other processes' busy cores, losses)."""
    if ddp:
        dist.barrier()
    busy0, cpu0 = MachineLoad.busy_seconds(), time.process_time()
    times, losses = [], None
    start = time.perf_counter()
    for i in range(steps):
        t0 = time.perf_counter()
        losses = step(i)
        times.append(time.perf_counter() - t0)
    if ddp:
        dist.barrier()
    elapsed = time.perf_counter() - start
    busy1, own = MachineLoad.busy_seconds(), ranks_sum(time.process_time() - cpu0, ddp)
    others = None if busy0 is None or busy1 is None else max(0.0, busy1 - busy0 - own) / elapsed
    return times, elapsed, others, losses


def timed_steps_cuda(step, steps, device):
    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    losses = None
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    events[0].record()
    for i in range(steps):
        losses = step(i)
        events[i + 1].record()
    torch.cuda.synchronize(device)
    elapsed = time.perf_counter() - start
    times = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(steps)]
    return times, elapsed, None, losses


def warm_up(step, count, device):
    """Runs `count` untimed steps; returns their wall times (synchronised on CUDA)."""
    times = []
    for i in range(count):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        step(i)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - t0)
    return times


def steps_to_time(args, warm_times):
    if args.steps > 0:
        return args.steps
    per_step = statistics.median(warm_times[-3:]) if warm_times else 0.1
    steps = max(2, math.ceil(args.seconds / max(per_step, 1e-6)))
    return int(ranks_max(steps, args.ddp))   # every rank must run as many steps


def make_step(args, device, rank, local_batch):
    """A fresh model, optimizers and data for one batch size; returns step(i) -> losses."""
    G, D = model.build(args.seed)
    G, D = G.to(device), D.to(device)
    if args.ddp:
        G = nn.parallel.DistributedDataParallel(G, broadcast_buffers=False)
        D = nn.parallel.DistributedDataParallel(D, broadcast_buffers=False)
    g_opt, d_opt = model.adam(G), model.adam(D)
    pool = model.synthetic_batches(args.seed + 1000 + rank, local_batch, POOL_BATCHES, device)
    autocast = model.autocast_for(args.precision, device.type)
    return lambda i: model.train_step(G, D, g_opt, d_opt, pool[i % POOL_BATCHES], autocast)


def measure(args, device, rank, world, batch):
    """Warm-up and timed steps at global batch `batch`; returns the result as a dict."""
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    step = make_step(args, device, rank, batch // world)
    steps = steps_to_time(args, warm_up(step, args.warmup, device))
    if cuda:
        times, elapsed, others, (g_loss, d_loss) = timed_steps_cuda(step, steps, device)
    else:
        times, elapsed, others, (g_loss, d_loss) = timed_steps_cpu(step, steps, args.ddp)
    result = summarise(args, device, world, batch, times, elapsed)
    result.update(g_loss=round(float(g_loss), 4), d_loss=round(float(d_loss), 4))
    if cuda:
        result["peak_mem_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
        torch.cuda.empty_cache()
    else:
        result["other_cores"] = None if others is None else round(others, 2)
    return result


def summarise(args, device, world, batch, times, elapsed):
    ordered = sorted(times)
    median = statistics.median(times)
    sps = batch * len(times) / elapsed
    return {
        "bench": "dcgan_torch", "model": getattr(model, "name", "dcgan"), "torch": torch.__version__, "device": device.type,
        "device_name": device_name(device), "precision": args.precision,
        "tf32": cuda_settings.tf32_enabled() if device.type == "cuda" else None,
        "ddp": args.ddp, "world_size": world, "threads": torch.get_num_threads(),
        "batch": batch, "local_batch": batch // world, "warmup": args.warmup,
        "steps": len(times), "elapsed_s": round(elapsed, 4),
        "samples_per_s": round(sps, 2),
        "samples_per_s_from_median_step": round(batch / median, 2),
        "step_ms_median": round(median * 1e3, 4),
        "step_ms_min": round(ordered[0] * 1e3, 4),
        "step_ms_p90": round(ordered[int(0.9 * (len(ordered) - 1))] * 1e3, 4),
        "step_ms_max": round(ordered[-1] * 1e3, 4),
        "gflops": round(sps * model.FLOPS_PER_SAMPLE / 1e9, 2),
    }


# --------------------------------------------------------------------------- reporting

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


def header_lines(args, device, world):
    if device.type == "cuda":
        lines = cuda_settings.header_lines(device, args.precision)
    else:
        mode = f"DDP gloo x{world}" if args.ddp else "1 process"
        lines = [f"dcgan_torch | device cpu ({device_name(device)}) | torch {torch.__version__} | "
                 f"precision {args.precision} | {mode} | {torch.get_num_threads()} "
                 f"thread(s) per process",
                 "  timing: wall clock per step" + (", rank 0's" if args.ddp else "")]
    timed = f"{args.steps} timed steps" if args.steps > 0 else f"~{args.seconds:g} s timed"
    lines.append(f"  model: {getattr(model, 'name', 'DCGAN 1x28x28')}: G {model.count_params(model.Generator()):,} + "
                 f"D {model.count_params(model.Discriminator()):,}"
                 f" parameters; {model.FLOPS_PER_SAMPLE / 1e6:.1f} MFLOP/sample/step; "
                 f"{args.warmup} warm-up, {timed} per batch size; batch = global batch")
    last = "peak_MiB" if device.type == "cuda" else "others"
    lines.append(f"{'batch':>6} {'steps':>6} {'median_ms':>10} {'p90_ms':>9} {'min_ms':>9} "
                 f"{'samples/s':>11} {'samples/s@med':>14} {'GFLOP/s':>9} {'G_loss':>7} "
                 f"{'D_loss':>7} {last:>9}")
    return lines


def row_line(r):
    last = r.get("peak_mem_mib", r.get("other_cores"))
    return (f"{r['batch']:>6} {r['steps']:>6} {r['step_ms_median']:>10.3f} "
            f"{r['step_ms_p90']:>9.3f} {r['step_ms_min']:>9.3f} {r['samples_per_s']:>11.1f} "
            f"{r['samples_per_s_from_median_step']:>14.1f} {r['gflops']:>9.1f} "
            f"{r['g_loss']:>7.4f} {r['d_loss']:>7.4f} "
            + (f"{last:>9}" if last is not None else f"{'n/a':>9}"))


# --------------------------------------------------------------------------- running

def set_up_device(args):
    if args.device == "cuda":
        device = torch.device("cuda", torch.cuda.current_device())
        cuda_settings.configure(args.allow_tf32, not args.no_cudnn, not args.no_cudnn_benchmark)
        if args.threads is not None:
            torch.set_num_threads(args.threads)
        return device
    torch.set_num_threads(args.threads if args.threads is not None else 1)
    return torch.device("cpu")


def select_model(args):
    """Sets the module-level `model` from --model (in every process: spawned ranks import
    this file afresh)."""
    global model
    model = image_dcgan_model.Bench(args.image_size, args.channels) if args.model == "image-dcgan" else dcgan_model


def run_rank(rank, world, args):
    """One process's whole run: every batch size; rank 0 prints and writes the results."""
    select_model(args)
    if args.ddp:
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
        if args.pin:
            os.sched_setaffinity(0, {rank % os.cpu_count()})
    device = set_up_device(args)
    if rank == 0:
        print("\n".join(header_lines(args, device, world)), flush=True)
    for batch in args.batch_size:
        result = measure(args, device, rank, world, batch)
        if rank == 0:
            print(row_line(result), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(result) + "\n")
    if args.ddp:
        dist.destroy_process_group()


def spawned_rank(rank, world, args):
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
    run_rank(rank, world, args)


def launch_ranks(args):
    """Runs --world-size ranks: as they are when torchrun started this process, else
    spawned here on loopback with a free port."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        run_rank(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    torch.multiprocessing.spawn(spawned_rank, args=(args.world_size, args),
                                nprocs=args.world_size)


def count_flops(args):
    """Counts one single-process step's multiply-adds per sample (--ddp adds none: the
    all-reduce is additions); returns 0 when they equal MACS_PER_SAMPLE, else 1."""
    args.ddp = False
    device = set_up_device(args)
    batch = args.batch_size[0]
    step = make_step(args, device, 0, batch)
    with MacCounter() as counter:
        step(0)
    G, D = model.Generator(), model.Discriminator()
    print(f"parameters: G {model.count_params(G):,} + D {model.count_params(D):,} = "
          f"{model.count_params(G) + model.count_params(D):,}")
    print(f"multiply-adds of one training step per sample ({args.precision}, batch {batch}):")
    print(f"  {'operator':<28}{'weight / operand shapes':<42}{'dtype':<16}{'MACs':>13}")
    for op, shapes, dtype, macs in counter.records:
        print(f"  {op:<28}{str(shapes):<42}{dtype:<16}{macs // batch:>13,}")
    counted = counter.total() // batch
    agree = counted == model.MACS_PER_SAMPLE
    print(f"  total {counted:,} MACs = {2 * counted / 1e6:.1f} MFLOP per sample; "
          f"the model's MACS_PER_SAMPLE {model.MACS_PER_SAMPLE:,}: "
          + ("the same" if agree else "DIFFERENT"))
    return 0 if agree else 1


def main(argv=None, default_device="cpu", prog=None):
    parser = make_parser(default_device)
    if prog:
        parser.prog = prog
    args = parser.parse_args(argv)
    select_model(args)
    error = settings_error(args)
    if error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    if args.ddp and args.threads is None:
        args.threads = 1
    if args.count_flops:
        return count_flops(args)
    if args.ddp:
        launch_ranks(args)
    else:
        run_rank(0, 1, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
