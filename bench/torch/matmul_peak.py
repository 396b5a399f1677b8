#!/usr/bin/env python3
"""The GEMM peak of this CPU as torch reaches it: C = A @ B, n x n by n x n (2 n^3 FLOP).

The yardstick for "GFLOP/s per core / GEMM peak" in README.md and docs/pix2pix.md: how
close a whole training step comes to the best one large matrix product does.

Paths (--paths, default all three):
  fp32-mm      torch.mm on float32: runs in whatever libblas.so.3 libtorch loads (Debian's
               reference BLAS, or OpenBLAS under bench/torch/fair_torch.sh)
  bf16-mm      torch.mm on bfloat16: oneDNN's matmul (AVX512-BF16 / AMX where the CPU has them)
  fp32-onednn  the fp32 product through oneDNN (torch._C._nn.mkldnn_linear on an input in
               oneDNN's layout): the kernels torch's ordinary convolutions use, whatever BLAS

For every thread count and path: one untimed call, then --reps timed calls; prints the
median, min and max GFLOP/s, then the best fp32 median per thread count (the "GEMM peak").

  /usr/bin/python3 bench/torch/matmul_peak.py --threads 1 2
  bench/torch/fair_torch.sh /usr/bin/python3 bench/torch/matmul_peak.py --threads 1
"""

import argparse
import json
import statistics
import sys
import time

import torch

PATHS = ("fp32-mm", "bf16-mm", "fp32-onednn")


def products(n):
    """{path: a zero-argument function computing one n x n x n product}."""
    torch.manual_seed(0)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a16, b16 = a.bfloat16(), b.bfloat16()
    a_onednn = a.to_mkldnn()
    b_t = b.t().contiguous()          # mkldnn_linear(x, w) computes x @ w^T
    check_onednn_product(a, b, b_t)
    return {
        "fp32-mm": lambda: torch.mm(a, b),
        "bf16-mm": lambda: torch.mm(a16, b16),
        "fp32-onednn": lambda: torch._C._nn.mkldnn_linear(a_onednn, b_t, None),
    }


def check_onednn_product(a, b, b_t):
    """The oneDNN path must compute A @ B, or its GFLOP/s mean nothing."""
    rows = a[:32].contiguous()
    got = torch._C._nn.mkldnn_linear(rows.to_mkldnn(), b_t, None).to_dense()
    if not torch.allclose(got, rows @ b, rtol=1e-3, atol=1e-2):
        raise SystemExit("matmul_peak: the oneDNN product differs from torch.mm; "
                         "fp32-onednn cannot be measured with this torch")


def time_calls(fn, reps):
    fn()                              # allocations, oneDNN's kernel generation
    seconds = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return seconds


def measure(fn, n, threads, path, reps):
    seconds = time_calls(fn, reps)
    gflops = sorted(2 * n**3 / s / 1e9 for s in seconds)
    return {"path": path, "n": n, "threads": threads, "reps": reps,
            "gflops_median": round(statistics.median(gflops), 1),
            "gflops_min": round(gflops[0], 1), "gflops_max": round(gflops[-1], 1),
            "ms_median": round(statistics.median(seconds) * 1e3, 2)}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    p.add_argument("--n", type=int, default=2048, help="matrix size (default 2048)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                   help="intra-op thread counts to measure (default 1 2)")
    p.add_argument("--reps", type=int, default=7, help="timed calls per path (default 7)")
    p.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    p.add_argument("--json", metavar="FILE", help="append one JSON line per result to FILE")
    args = p.parse_args(argv)
    if args.n < 64 or args.reps < 1 or min(args.threads) < 1:
        p.error("--n must be >= 64, --reps and every --threads value >= 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    fns = products(args.n)
    print(f"matmul_peak | torch {torch.__version__} | n = {args.n} | {args.reps} timed calls")
    for threads in args.threads:
        torch.set_num_threads(threads)
        best_fp32 = None
        for path in args.paths:
            r = measure(fns[path], args.n, threads, path, args.reps)
            print(f"{path:<12} threads {threads}: GFLOP/s median {r['gflops_median']:7.1f}  "
                  f"min {r['gflops_min']:7.1f}  max {r['gflops_max']:7.1f}  "
                  f"({r['ms_median']:.1f} ms per product)", flush=True)
            if path.startswith("fp32") and (best_fp32 is None
                                            or r["gflops_median"] > best_fp32["gflops_median"]):
                best_fp32 = r
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
        if best_fp32:
            print(f"fp32 GEMM peak at {threads} thread(s): {best_fp32['gflops_median']:.1f} "
                  f"GFLOP/s ({best_fp32['path']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
