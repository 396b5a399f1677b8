"""A job's epoch rows: the columns of the run folder's epochs.csv.

Every column of epochs.csv is a field of gantry.v1.EpochMetrics of the same name, in the
same order (report/epoch_metrics.h), so a row is that message as a dict in field order,
with the unrounded values the group measured. epochs_csv() prints rows as the worker
writes epochs.csv, byte for byte, with the C++ table's formats below.
"""
import math

from gantry._stubs import metrics_pb2

# How epochs.csv prints each column (report/epoch_metrics.cc, EpochColumns()). A column
# added there gets its format here too; one missing is an error in epochs_csv().
CSV_FORMATS = {
    "batch_size": "%d", "epoch": "%d", "seconds": "%.3f", "steady_step_ms": "%.3f", "samples_per_s": "%.1f",
    "d_loss": "%.5f", "g_loss": "%.5f", "steps": "%d", "step_p50_ms": "%.3f", "step_p99_ms": "%.3f",
    "data_wait_ms": "%.3f", "world_size": "%d", "allreduce_ms": "%.3f", "allreduce_share": "%.4f",
    "straggler_flags": "%d", "loss_scale_g": "%.9g", "loss_scale_d": "%.9g", "skipped_steps_g": "%d",
    "skipped_steps_d": "%d", "peak_rss_mb": "%.1f", "energy_j": "%.1f", "energy_j_per_sample": "%.6g",
    "energy_estimated": "%d", "quality_fd": "%.4f", "quality_class_entropy": "%.4f",
    "quality_marginal_entropy": "%.4f", "quality_confidence": "%.4f", "val_l1": "%.5f", "val_rel_l2": "%.5f",
    "energy_source": "%d", "val_persistence_l1": "%.5f", "val_persistence_rel_l2": "%.5f", "quality_kid": "%.6g",
    "allreduce_exposed_ms": "%.3f",
}

QUALITY_COLUMNS = ("quality_fd", "quality_class_entropy", "quality_marginal_entropy", "quality_confidence",
                   "quality_kid")


def columns():
    """The columns of epochs.csv, in order."""
    return [f.name for f in metrics_pb2.EpochMetrics.DESCRIPTOR.fields]


def row_of(metrics):
    """A gantry.v1.EpochMetrics as {column: value}, in column order (ints stay ints). A
    column that may be unset travels as a google.protobuf.DoubleValue (quality_kid): its
    value, or NaN where the row has none, as epochs.csv writes a KID not measured."""
    return {f.name: _value(metrics, f) for f in metrics_pb2.EpochMetrics.DESCRIPTOR.fields}


def _value(metrics, field):
    if field.message_type is None:
        return getattr(metrics, field.name)
    return getattr(metrics, field.name).value if metrics.HasField(field.name) else math.nan


def quality_of(row):
    """The quality scores of an epoch ({"fd": ..., "class_entropy": ..., ..., "kid": ...}),
    or None when the epoch was not scored (quality_fd is -1: --quality off, or no judge
    cached). "kid" is NaN where the epoch has no KID (the judge's runs)."""
    if row.get("quality_fd", -1) < 0:
        return None
    return {name[len("quality_"):]: row.get(name, math.nan) for name in QUALITY_COLUMNS}


def epochs_csv(rows):
    """The rows as the run folder's epochs.csv: its header line, then one line per row."""
    names = columns()
    missing = [n for n in names if n not in CSV_FORMATS]
    if missing:
        raise KeyError("epochs_csv: no CSV format for column(s) {} (add them to gantry.report.CSV_FORMATS "
                       "as report/epoch_metrics.cc prints them)".format(", ".join(missing)))
    lines = [",".join(names)]
    for row in rows:
        lines.append(",".join(CSV_FORMATS[n] % row[n] for n in names))
    return "\n".join(lines) + "\n"


def as_dataframe(rows, names, what):
    """The rows (dicts) as a pandas DataFrame with the columns `names`, in order;
    ImportError naming the package when pandas is not installed."""
    try:
        import pandas
    except ImportError:
        raise ImportError("{}: a DataFrame needs pandas (Debian: apt-get install python3-pandas); "
                          "without it the rows come as a list of dicts".format(what)) from None
    return pandas.DataFrame(rows, columns=list(names))
