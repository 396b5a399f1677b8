"""The batch-size timing table of a job, as `gantry report` prints it: the run folder's
timing.md (report/timing_report.cc) and the straggler events (cli/report_format.cc).

Per global batch size: total and per-epoch training time, the mean steady-state
samples/s, the all-reduce share, and the change in total time against the smallest
batch size; then energy and sample quality when measured, and every epoch. The text is
the CLI's byte for byte (the package's tests compare them).
"""
import collections
import math

from gantry.report import as_dataframe, row_of
from gantry.time_to_target import goal_of, time_to_target_markdown, times_to_target

_ENERGY_SOURCE_TEXT = {1: "estimated: CPU seconds x --watts-per-core", 2: "measured: RAPL",
                       3: "measured: NVML, the GPUs"}
_ENERGY_SOURCE_NAMES = {0: "none", 1: "estimate", 2: "rapl", 3: "nvml"}
# What Timing.summaries holds per batch size, in this order.
SUMMARY_KEYS = ("batch_size", "epochs", "total_seconds", "seconds_per_epoch", "samples_per_s", "allreduce_share",
                "change_vs_smallest", "energy_j", "samples", "energy_estimated")


class Timing:
    """`summaries`: one dict per batch size, in ascending batch size (batch_size, epochs,
    total_seconds, seconds_per_epoch, samples_per_s, allreduce_share, change_vs_smallest,
    energy_j, samples, energy_estimated); `markdown`: the table as `gantry report`
    prints it (also str(timing))."""

    def __init__(self, summaries, markdown):
        self.summaries = summaries
        self.markdown = markdown

    def __str__(self):
        return self.markdown

    def __repr__(self):
        return "Timing({} batch sizes)".format(len(self.summaries))

    def as_dataframe(self):
        """The summaries as a pandas DataFrame (needs pandas)."""
        return as_dataframe(self.summaries, SUMMARY_KEYS, "Timing.as_dataframe")


def timing_of(report):
    """The Timing of a gantry.v1.JobReport."""
    rows = [row_of(m) for m in report.epochs]
    if report.epochs and report.epochs[0].world_size > 0:
        world_size = report.epochs[0].world_size
    else:
        world_size = max(report.job.world_size, 1)
    summaries = summarize_by_batch_size(rows)
    markdown = _timing_markdown(rows, summaries, world_size)
    goal = goal_of(report.job.spec)
    public = [_public(s) for s in summaries]
    if goal:
        markdown += time_to_target_markdown(rows, goal)
        for s, t in zip(public, times_to_target(rows, goal)):
            s.update({"target_reached": t["reached"], "seconds_to_target": t["seconds"] if t["reached"] else None,
                      "samples_to_target": t["samples"] if t["reached"] else None})
    markdown += _stragglers_markdown(report.stragglers)
    return Timing(public, markdown)


def _energy_source_of(energy_source, energy_estimated):
    """Rows from before the energy_source column (0) were RAPL's unless estimated."""
    if energy_source != 0:
        return energy_source
    return 1 if energy_estimated != 0 else 2


def summarize_by_batch_size(rows):
    """report/timing_report.cc's SummarizeByBatchSize: one summary per batch size."""
    by_batch = collections.OrderedDict()
    for r in rows:
        s = by_batch.setdefault(r["batch_size"], {
            "batch_size": r["batch_size"], "epochs": 0, "total_seconds": 0.0, "samples_per_s": 0.0,
            "allreduce_share": 0.0, "energy_j": 0.0, "samples": 0, "energy_estimated": False,
            "energy_sources": set()})
        s["epochs"] += 1
        s["total_seconds"] += r["seconds"]
        s["samples_per_s"] += r["samples_per_s"]
        s["allreduce_share"] += r["allreduce_share"]
        s["energy_j"] += r["energy_j"]
        s["samples"] += r["steps"] * r["batch_size"]
        s["energy_estimated"] = s["energy_estimated"] or r["energy_estimated"] != 0
        if r["energy_j"] > 0:
            s["energy_sources"].add(_energy_source_of(r["energy_source"], r["energy_estimated"]))
    out = [by_batch[b] for b in sorted(by_batch)]
    for s in out:
        s["seconds_per_epoch"] = s["total_seconds"] / s["epochs"]
        s["samples_per_s"] /= s["epochs"]
        s["allreduce_share"] /= s["epochs"]
        s["change_vs_smallest"] = 0.0
    if out and out[0]["total_seconds"] > 0:
        for s in out:
            s["change_vs_smallest"] = s["total_seconds"] / out[0]["total_seconds"] - 1.0
    return out


def _public(summary):
    return {k: summary[k] for k in SUMMARY_KEYS}


def _describe_sources(sources):
    parts = [_ENERGY_SOURCE_TEXT.get(code, _ENERGY_SOURCE_NAMES.get(code, "unknown")) for code in sorted(sources)]
    return ("mixed: " if len(parts) > 1 else "") + "; ".join(parts)


def _energy_markdown(summaries):
    md = ""
    for s in summaries:
        if s["energy_j"] <= 0:
            continue
        per_sample = s["energy_j"] / s["samples"] if s["samples"] > 0 else 0.0
        md += "- global batch %d: %.0f J (%.2f Wh) over %d samples, %.4f J/sample (%s)\n" % (
            s["batch_size"], s["energy_j"], s["energy_j"] / 3600.0, s["samples"], per_sample,
            _describe_sources(s["energy_sources"]))
    return "\n## Energy\n\n" + md if md else md


def _quality_markdown(rows):
    md = ""
    for r in rows:
        if r["quality_fd"] < 0:
            continue
        md += "- global batch %d epoch %d: Fréchet distance %.3f" % (r["batch_size"], r["epoch"], r["quality_fd"])
        if r["quality_confidence"] >= 0:
            md += ", class entropy %.3f (per sample) / %.3f (of the mean), confidence %.3f" % (
                r["quality_class_entropy"], r["quality_marginal_entropy"], r["quality_confidence"])
        if math.isfinite(r.get("quality_kid", math.nan)):
            md += ", KID %.4g" % r["quality_kid"]
        md += "\n"
    if not md:
        return md
    return ("\n## Sample quality (lower Fréchet distance and KID, lower per-sample and higher "
            "of-the-mean class entropy are better)\n\n" + md)


def _timing_markdown(rows, summaries, world_size, precision="fp32"):
    md = "# Training time per batch size (%d rank%s, %s)\n\n" % (world_size, "" if world_size == 1 else "s",
                                                                  precision)
    md += ("| global batch | epochs | total s | s/epoch | samples/s | all-reduce share "
           "| total time vs smallest batch |\n")
    md += "|---:|---:|---:|---:|---:|---:|---:|\n"
    for s in summaries:
        md += "| %d | %d | %.1f | %.1f | %.1f | %.1f %% | %+.1f %% |\n" % (
            s["batch_size"], s["epochs"], s["total_seconds"], s["seconds_per_epoch"], s["samples_per_s"],
            100.0 * s["allreduce_share"], 100.0 * s["change_vs_smallest"])
    md += _energy_markdown(summaries)
    md += _quality_markdown(rows)
    md += ("\n## Per epoch\n\n| global batch | epoch | steps | s | steady ms/step | p50 ms | p99 ms | data wait ms "
           "| samples/s | all-reduce ms | exposed ms | stragglers | d_loss | g_loss | loss scale G/D | skipped G/D | peak RSS MiB "
           "| J |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        energy = ("%.0f%s" % (r["energy_j"], " (est.)" if r["energy_estimated"] else "")) if r["energy_j"] > 0 \
            else "-"
        md += ("| %d | %d | %d | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %d | %.4f | %.4f "
               "| %g/%g | %d/%d | %.0f | %s |\n") % (
            r["batch_size"], r["epoch"], r["steps"], r["seconds"], r["steady_step_ms"], r["step_p50_ms"],
            r["step_p99_ms"], r["data_wait_ms"], r["samples_per_s"], r["allreduce_ms"], r["allreduce_exposed_ms"],
            r["straggler_flags"],
            r["d_loss"], r["g_loss"], r["loss_scale_g"], r["loss_scale_d"], r["skipped_steps_g"], r["skipped_steps_d"],
            r["peak_rss_mb"], energy)
    return md


def _stragglers_markdown(stragglers):
    if not stragglers:
        return ""
    md = ("\n## Straggler events\n\n| global batch | epoch | step | rank | rank ms | median ms | ratio |\n"
          "|---:|---:|---:|---:|---:|---:|---:|\n")
    for e in stragglers:
        md += "| %d | %d | %d | %d | %.2f | %.2f | %.2fx |\n" % (
            e.batch_size, e.epoch, e.step, e.rank, e.rank_compute_ms, e.median_compute_ms, e.ratio)
    return md
