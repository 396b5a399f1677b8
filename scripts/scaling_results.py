"""Reads the results.txt of scripts/scaling_study.sh: one line per run,
`link batch wire overlap step_ms samples_per_s allreduce_ms exposed_ms`."""
import statistics


def medians(path, batch, links=None):
    """{(link, wire, overlap): [median step_ms, samples_per_s, allreduce_ms, exposed_ms]}
    over the rounds of the runs at `batch` (and on `links`, when given)."""
    rows = {}
    for line in open(path):
        f = line.split()
        if int(f[1]) != batch or (links is not None and f[0] not in links):
            continue
        rows.setdefault((f[0], f[2], f[3]), []).append([float(x) for x in f[4:]])
    return {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
