"""How far a running job has come and when it may end: coordinator/jobs/job_outlook.cc's
estimate, from the job's spec and one progress report.

Steps per epoch are known only for the batch size in progress; another batch size of
the sweep is assumed to go over the same images (steps x batch size per epoch), so its
steps are estimated. The ETA assumes the current samples/s for the rest of the run, so a
sweep towards larger batches usually ends sooner than it says.
"""
import collections

# What `gantry-worker train` takes for the three settings the estimate needs when the
# spec leaves them unset (run_spec.proto's presence rule); the package's tests check
# them against `gantry-worker train --help`.
WORKER_DEFAULTS = {"epochs": 1, "batch_sizes": (64,), "max_steps": 0}

Outlook = collections.namedtuple("Outlook", "fraction_done eta_seconds")


def _steps_of(batch, epochs, max_steps, images_per_epoch):
    per_epoch = max(images_per_epoch // max(batch, 1), 1)
    steps = per_epoch * epochs
    return min(steps, max_steps) if max_steps > 0 else steps


def training_outlook(spec, progress):
    """The Outlook of a training job (gantry.v1.RunSpec) from a gantry.v1.Progress; None
    when no step count was reported yet or the batch size is not in the sweep. The ETA
    is None until a rate is reported."""
    if progress.steps_per_epoch <= 0:
        return None
    epochs = spec.epochs.value if spec.HasField("epochs") else WORKER_DEFAULTS["epochs"]
    max_steps = spec.max_steps.value if spec.HasField("max_steps") else WORKER_DEFAULTS["max_steps"]
    sweep = list(spec.batch_sizes) or list(WORKER_DEFAULTS["batch_sizes"])
    if progress.batch_size not in sweep:
        return None
    current = sweep.index(progress.batch_size)
    images_per_epoch = progress.steps_per_epoch * progress.batch_size
    total = done = 0.0
    for i, batch in enumerate(sweep):
        samples = _steps_of(batch, epochs, max_steps, images_per_epoch) * batch
        total += samples
        if i < current:
            done += samples
    current_steps = _steps_of(progress.batch_size, epochs, max_steps, images_per_epoch)
    done += min(max(progress.global_step, 0), current_steps) * progress.batch_size
    fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
    eta = (total - done) / progress.samples_per_s if progress.samples_per_s > 0 else None
    return Outlook(fraction, eta)


def rollout_outlook(progress):
    """A rollout's fraction is its model steps done; its rate is in tiles, whose count per
    step only the group knows, so there is no ETA."""
    if progress.steps_per_epoch <= 0:
        return None
    return Outlook(min(max(progress.step / progress.steps_per_epoch, 0.0), 1.0), None)
