"""Time to quality from epoch rows (no coordinator): the same cases and text as
tests/report/time_to_target_test.cc, so `job.timing()` prints what `gantry report` does."""
import math

from gantry.time_to_target import FD, REL_L2, time_to_target_markdown, times_to_target


def _row(batch, epoch, steps, seconds, fd, rel_l2=0.0):
    return {"batch_size": batch, "epoch": epoch, "steps": steps, "seconds": seconds, "quality_fd": fd,
            "val_rel_l2": rel_l2}


def test_interpolates_between_scored_epochs():
    [t] = times_to_target([_row(64, 1, 100, 10, 300), _row(64, 2, 100, 10, 100)], (FD, 200))
    assert t["reached"] and not t["upper_bound"] and t["epoch"] == 2
    assert (t["seconds"], t["steps"], t["samples"]) == (15, 150, 150 * 64)


def test_upper_bound_never_and_the_ratio_to_the_smallest_batch():
    rows = [_row(512, 1, 10, 5, 90), _row(64, 1, 100, 20, 150), _row(64, 2, 100, 20, 120)]
    md = time_to_target_markdown(rows, (FD, 100))
    assert "| 64 | never (2 scored epochs) | - | - | - | - | 120 |" in md
    assert "| 512 | epoch 1 (by) | 5.0 | 5120 | 10 | - | 90 |" in md
    rows = [_row(64, 1, 100, 10, 50), _row(256, 1, 50, 4, 300), _row(256, 2, 50, 4, 50)]
    md = time_to_target_markdown(rows, (FD, 60))
    assert "## Time to target (Fréchet distance <= 60, interpolated between scored epochs)" in md
    assert "| 64 | epoch 1 (by) | 10.0 | 6400 | 100 | 1.00x |" in md
    assert "| 256 | epoch 2 | 7.8 | 25088 | 98 | 3.92x |" in md


def test_flow_uses_the_held_out_error_and_nan_never_reaches():
    rows = [_row(16, 1, 10, 1, -1, 0.4), _row(16, 2, 10, 1, -1, math.nan), _row(16, 3, 10, 1, -1, 0.1)]
    [t] = times_to_target(rows, (REL_L2, 0.2))
    assert t["reached"] and t["epoch"] == 3 and t["scored_epochs"] == 2
