#!/usr/bin/env python3
"""What the scaling study's numbers predict for more hosts (docs/scaling.md).

Reads the results.txt of scripts/scaling_study.sh (one line per run: link batch wire
overlap step_ms samples_per_s allreduce_ms exposed_ms) and fits, for one batch size and
link, a ring all-reduce cost model:

  T(n)       = 2 (n - 1) / n * S / B  +  2 (n - 1) * m * alpha
  exposed(n) = max(0, T(n) - W)                  (overlap on; W: the backward that hides it)
  step(n)    = c + exposed(n)                    (c: the step's own compute, weak scaling)

S: the bytes each rank all-reduces per step (the models' gradient: 4 bytes a value fp32,
2 bf16), B: the link's effective bandwidth, fitted from the 2-rank all-reduce time with
overlap off at that link (there 2 (n - 1) / n = 1), m: the all-reduce messages a step
sends one after another (its buckets), alpha: the one-way latency of a message (given;
ping's round trip / 2 on the emulated link), W: fitted as T(2) - exposed(2) from the
overlapped run, c: the shared-memory step with overlap off less its exposed all-reduce.
Prints the efficiency c / step(n) per host count (1.00: the all-reduce fully hidden), where it holds: same per-rank
batch (weak scaling), one rank per host, a non-blocking switch (every link at B at
once), no stragglers.

  scripts/scaling_model.py RESULTS [--batch 64] [--link 1gbit] [--values 2527681]
      [--messages 4] [--alpha-ms 0.05] [--gbits 1,10,25]
"""
import argparse

from scaling_results import medians


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--link", default="1gbit", help="the emulated link the fit uses")
    p.add_argument("--link-gbits", type=float, default=1.0, help="that link's rate")
    p.add_argument("--values", type=int, default=2527681, help="gradient values per step (DCGAN: G + D)")
    p.add_argument("--messages", type=int, default=4, help="all-reduces per step one after another (buckets: DCGAN 3 + 1)")
    p.add_argument("--alpha-ms", type=float, default=0.05)
    p.add_argument("--gbits", default="1,10,25")
    p.add_argument("--hosts", default="2,4,8,16,32,64")
    a = p.parse_args()
    m = medians(a.results, a.batch, ("shm", a.link))
    print("| wire | link Gbit/s | B fitted at the %s link, Gbit/s | W ms | c ms | %s |" % (
        a.link, " | ".join("%s hosts" % n for n in a.hosts.split(","))))
    print("|---|---:|---:|---:|---:|" + "---:|" * len(a.hosts.split(",")))
    for wire in ("fp32", "bf16"):
        if (a.link, wire, "off") not in m or (a.link, wire, "on") not in m or ("shm", wire, "off") not in m:
            continue
        size = a.values * (4 if wire == "fp32" else 2)
        t2 = m[(a.link, wire, "off")][2] / 1e3
        exposed2 = m[(a.link, wire, "on")][3] / 1e3
        shm = m[("shm", wire, "off")]
        c = (shm[0] - shm[3]) / 1e3
        latency2 = 2 * a.messages * a.alpha_ms / 1e3
        b_fit = size / max(t2 - latency2, 1e-6)          # bytes/s at the emulated link
        scale = b_fit / (a.link_gbits * 1e9 / 8)         # what fraction of the wire rate it reached
        w = max(0.0, t2 - exposed2)
        for gbits in (float(x) for x in a.gbits.split(",")):
            b = gbits * 1e9 / 8 * scale
            cells = []
            for n in (int(x) for x in a.hosts.split(",")):
                t = 2 * (n - 1) / n * size / b + 2 * (n - 1) * a.messages * a.alpha_ms / 1e3
                step = c + max(0.0, t - w)
                cells.append("%.2f" % (c / step))
            print("| %s | %g | %.2f | %.0f | %.0f | %s |" % (wire, gbits, b_fit * 8 / 1e9, w * 1e3, c * 1e3,
                                                             " | ".join(cells)))


if __name__ == "__main__":
    main()
