"""What Job.watch() yields: one object per gantry.v1.JobEvent, in the order the
coordinator sends them (the job's history, then live entries until it ends).

- StateChanged: the job was queued, started on a group, requeued, or ended; the last
  event of a watch is the one with the final state.
- Progress: where the group is and how fast it goes (live only, never replayed), with
  the run's fraction done and an ETA (gantry.outlook).
- EpochEnded: an epoch's row of epochs.csv (losses, samples/s, the quality score).
- Straggler: a rank that stayed slower than the group median.

`sequence` numbers the stored entries of a job from 1; a Progress carries the sequence
of the entry before it. `time` is the coordinator's clock, in seconds since the epoch.
"""
import dataclasses
from typing import Optional

from gantry.outlook import rollout_outlook, training_outlook
from gantry.report import quality_of, row_of
from gantry.states import JobState


@dataclasses.dataclass(frozen=True)
class StateChanged:
    job_id: str
    sequence: int
    time: float
    state: JobState
    attempt: int
    group_id: str
    message: str


@dataclasses.dataclass(frozen=True)
class Progress:
    job_id: str
    sequence: int
    time: float
    batch_size: int          # 0 for a rollout, whose steps are model steps
    epoch: int
    step: int                # within the epoch, 1-based (a rollout: its model step)
    steps_per_epoch: int     # (a rollout: its model steps)
    global_step: int         # steps done at this batch size
    samples_per_s: float     # recent (a rollout: tiles per second)
    d_loss: float
    g_loss: float
    fraction_done: Optional[float]  # of the whole run, by samples; None: not known yet
    eta_seconds: Optional[float]    # at the current rate; None: no rate yet, or a rollout

    @property
    def rollout(self):
        return self.batch_size == 0


@dataclasses.dataclass(frozen=True)
class EpochEnded:
    job_id: str
    sequence: int
    time: float
    row: dict                # every column of epochs.csv, unrounded

    @property
    def batch_size(self):
        return self.row["batch_size"]

    @property
    def epoch(self):
        return self.row["epoch"]

    @property
    def samples_per_s(self):
        return self.row["samples_per_s"]

    @property
    def d_loss(self):
        return self.row["d_loss"]

    @property
    def g_loss(self):
        return self.row["g_loss"]

    @property
    def quality(self):
        """{"fd", "class_entropy", "marginal_entropy", "confidence"}, or None when not scored."""
        return quality_of(self.row)


@dataclasses.dataclass(frozen=True)
class Straggler:
    job_id: str
    sequence: int
    time: float
    batch_size: int
    epoch: int
    step: int
    rank: int
    window_steps: int
    rank_compute_ms: float
    median_compute_ms: float
    ratio: float


def event_of(message, job):
    """The event for a gantry.v1.JobEvent of `job` (a gantry.v1.Job, for the outlook), or
    None for a kind this client does not know (a newer coordinator's)."""
    head = (message.job_id, message.sequence, message.unix_ms / 1000.0)
    kind = message.WhichOneof("kind")
    if kind == "state":
        s = message.state
        return StateChanged(*head, JobState.of(s.state), s.attempt, s.group_id, s.message)
    if kind == "epoch":
        return EpochEnded(*head, row_of(message.epoch))
    if kind == "straggler":
        e = message.straggler
        return Straggler(*head, e.batch_size, e.epoch, e.step, e.rank, e.window_steps, e.rank_compute_ms,
                         e.median_compute_ms, e.ratio)
    if kind == "progress":
        return _progress_of(head, message.progress, job)
    return None


def _progress_of(head, p, job):
    is_rollout = job.HasField("rollout") or p.batch_size == 0
    outlook = rollout_outlook(p) if is_rollout else training_outlook(job.spec, p)
    return Progress(*head, p.batch_size, p.epoch, p.step, p.steps_per_epoch, p.global_step, p.samples_per_s,
                    p.d_loss, p.g_loss, outlook.fraction_done if outlook else None,
                    outlook.eta_seconds if outlook else None)
