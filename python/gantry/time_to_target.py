"""Time to quality of a job with a target (--target-fd / --target-rel-l2), as `gantry
report` prints it: report/time_to_target.cc, read off the epoch rows.

Per batch size, the wall time, samples and steps at which the score first reached the
target, interpolated linearly between the scored epochs around the crossing; an upper
bound ("(by)") when the first scored epoch already meets it; "never" with the best score
otherwise.
"""
import collections

FD, REL_L2 = "fd", "rel_l2"


def goal_of(spec):
    """(metric, value) of a RunSpec's target, or None."""
    if spec.HasField("target_fd") and spec.target_fd.value > 0:
        return FD, spec.target_fd.value
    if spec.HasField("target_rel_l2") and spec.target_rel_l2.value > 0:
        return REL_L2, spec.target_rel_l2.value
    return None


def _score(row, metric):
    value = row["quality_fd"] if metric == FD else row["val_rel_l2"]
    ok = value >= 0 if metric == FD else value > 0  # NaN fails both
    return value if ok else None


def times_to_target(rows, goal):
    """One dict per batch size, ascending: batch_size, reached, upper_bound, seconds,
    samples, steps, epoch, best, scored_epochs."""
    metric, target = goal
    by_batch = collections.OrderedDict()
    for r in rows:
        by_batch.setdefault(r["batch_size"], []).append(r)
    return [_crossing(b, by_batch[b], metric, target) for b in sorted(by_batch)]


def _crossing(batch, rows, metric, target):
    out = {"batch_size": batch, "reached": False, "upper_bound": False, "seconds": 0.0, "samples": 0.0,
           "steps": 0.0, "epoch": 0, "best": -1.0, "scored_epochs": 0}
    at = (0.0, 0.0, 0.0)
    last, last_at = None, (0.0, 0.0, 0.0)
    for r in rows:
        end = (at[0] + r["seconds"], at[1] + r["steps"] * r["batch_size"], at[2] + r["steps"])
        score = _score(r, metric)
        if score is not None:
            out["scored_epochs"] += 1
            if out["best"] < 0 or score < out["best"]:
                out["best"] = score
            if not out["reached"] and score <= target:
                t = (last - target) / (last - score) if last is not None else 1.0
                out.update(reached=True, epoch=r["epoch"], upper_bound=last is None,
                           seconds=last_at[0] + t * (end[0] - last_at[0]),
                           samples=last_at[1] + t * (end[1] - last_at[1]),
                           steps=last_at[2] + t * (end[2] - last_at[2]))
            last, last_at = score, end
        at = end
    return out


def time_to_target_markdown(rows, goal):
    """The "Time to target" section of `gantry report`."""
    metric, target = goal
    times = times_to_target(rows, goal)
    name = "Fréchet distance" if metric == FD else "held-out relative L2"
    md = ("\n## Time to target (%s <= %s, interpolated between scored epochs)\n\n"
          "| global batch | reached | s to target | samples to target | steps to target | samples vs smallest batch "
          "| best score |\n|---:|:---|---:|---:|---:|---:|---:|\n") % (name, "%g" % target)
    smallest = times[0] if times and times[0]["reached"] else None
    for t in times:
        if not t["reached"]:
            n = t["scored_epochs"]
            best = "-" if t["best"] < 0 else "%.4g" % t["best"]
            md += "| %d | never (%d scored epoch%s) | - | - | - | - | %s |\n" % (
                t["batch_size"], n, "" if n == 1 else "s", best)
            continue
        ratio = "%.2fx" % (t["samples"] / smallest["samples"]) if smallest and smallest["samples"] > 0 else "-"
        md += "| %d | epoch %d%s | %.1f | %.0f | %.0f | %s | %.4g |\n" % (
            t["batch_size"], t["epoch"], " (by)" if t["upper_bound"] else "", t["seconds"], t["samples"],
            t["steps"], ratio, t["best"])
    return md
