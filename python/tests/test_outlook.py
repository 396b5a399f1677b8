"""The fraction done and ETA of a progress report (coordinator/jobs/job_outlook.cc's rule),
and the worker defaults the rule falls back on, checked against gantry-worker itself."""
import re
import subprocess

import pytest

from gantry.outlook import WORKER_DEFAULTS, rollout_outlook, training_outlook
from gantry.settings import build_run_spec
from gantry.v1 import metrics_pb2
from processes import binary, child_environment


def progress(**fields):
    return metrics_pb2.Progress(**fields)


def test_the_sweep_is_counted_in_samples_over_every_batch_size():
    spec = build_run_spec({"batch_size": [32, 64], "epochs": 2})
    # 16 steps of 32 per epoch: 512 images; batch 64 then takes 8 steps per epoch.
    outlook = training_outlook(spec, progress(batch_size=32, epoch=1, step=4, steps_per_epoch=16, global_step=4,
                                              samples_per_s=100))
    assert outlook.fraction_done == pytest.approx(128 / 2048)
    assert outlook.eta_seconds == pytest.approx((2048 - 128) / 100)
    later = training_outlook(spec, progress(batch_size=64, epoch=2, step=8, steps_per_epoch=8, global_step=16,
                                            samples_per_s=200))
    assert later.fraction_done == 1 and later.eta_seconds == 0


def test_max_steps_caps_each_batch_size_and_no_rate_means_no_eta():
    spec = build_run_spec({"batch_size": [32, 64], "epochs": 2, "max_steps": 10})
    outlook = training_outlook(spec, progress(batch_size=64, epoch=1, step=2, steps_per_epoch=8, global_step=2))
    assert outlook.fraction_done == pytest.approx((10 * 32 + 2 * 64) / (10 * 32 + 10 * 64))
    assert outlook.eta_seconds is None


def test_unknown_progress_has_no_outlook():
    spec = build_run_spec({"batch_size": [32]})
    assert training_outlook(spec, progress(batch_size=32)) is None, "no steps per epoch yet"
    assert training_outlook(spec, progress(batch_size=48, steps_per_epoch=4)) is None, "not in the sweep"
    assert rollout_outlook(progress(step=3, steps_per_epoch=12)) == (0.25, None)


def test_the_defaults_are_gantry_worker_trains():
    help_text = subprocess.run([binary("GANTRY_WORKER_BIN"), "train", "--help"], capture_output=True, text=True,
                               timeout=30, env=child_environment()).stdout

    def default_of(setting):
        found = re.search(r"^\s*--{}\b[^[]*\[default: ([^]]*)\]".format(setting), help_text, re.MULTILINE)
        assert found, "no default of --{} in gantry-worker train --help:\n{}".format(setting, help_text)
        return found.group(1)

    assert int(default_of("epochs")) == WORKER_DEFAULTS["epochs"]
    assert tuple(int(b) for b in default_of("batch-size").split(",")) == WORKER_DEFAULTS["batch_sizes"]
    assert int(default_of("max-steps")) == WORKER_DEFAULTS["max_steps"]
