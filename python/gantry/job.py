"""A job on the coordinator: a training run, or a rollout of one, or samples from one."""
from gantry._stubs import coordinator_pb2
from gantry.events import StateChanged, event_of
from gantry.report import as_dataframe as rows_as_dataframe
from gantry.report import columns, epochs_csv, row_of
from gantry.states import JobState
from gantry.timing import timing_of
from gantry.watch import follow

DEFAULT_WAIT_SECONDS = 86400      # gantry watch --for
DEFAULT_RECONNECT_SECONDS = 60    # gantry watch --reconnect


class Job:
    """A job as the coordinator keeps it. `id` and `name` are fixed; `state` and `info`
    ask the coordinator each time they are read."""

    def __init__(self, client, message):
        self._client = client
        self._message = message  # the newest gantry.v1.Job seen

    def __repr__(self):
        return "Job({!r}, {})".format(self.id, JobState.of(self._message.state))

    @property
    def id(self):
        return self._message.id

    @property
    def name(self):
        return self._message.name

    @property
    def info(self):
        """The job as gantry.v1.Job, fresh from the coordinator (spec, attempts, progress,
        error, checkpoint, ...)."""
        return self.refresh()

    def refresh(self):
        """Asks the coordinator for the job; returns it as gantry.v1.Job and keeps it (for
        `error`, and the spec the ETA of watch() is computed from)."""
        self._message = self._client._call("GetJob", coordinator_pb2.GetJobRequest(job_id=self.id))
        return self._message

    @property
    def state(self):
        """The job's JobState now."""
        return JobState.of(self.refresh().state)

    @property
    def error(self):
        """Why the job failed, as last seen ("" otherwise)."""
        return self._message.error

    def watch(self, timeout=DEFAULT_WAIT_SECONDS, reconnect=DEFAULT_RECONNECT_SECONDS):
        """Iterates over the job's events (gantry.events) from its start until it ends; the
        last is a StateChanged with the final state. Survives coordinator restarts of up
        to `reconnect` seconds each; raises Timeout after `timeout` seconds in all,
        Unavailable when the coordinator stays away longer than `reconnect`."""
        for message in follow(self._client, self.id, timeout, reconnect):
            event = event_of(message, self._message)
            if event is not None:
                yield event

    def wait(self, timeout=DEFAULT_WAIT_SECONDS, reconnect=DEFAULT_RECONNECT_SECONDS):
        """Waits until the job ends and returns its final JobState (SUCCEEDED, FAILED: see
        `error`, CANCELLED). Timeout after `timeout` seconds."""
        for event in self.watch(timeout, reconnect):
            if isinstance(event, StateChanged) and event.state.ended:
                self.refresh()  # the final record: error, attempts, checkpoint
                return event.state
        return self.state

    def cancel(self):
        """Cancels the job and returns its state: CANCELLED when it was queued, CANCELLING
        when a group runs it (the group stops at its next report). Conflict when the job
        has already ended."""
        self._message = self._client._call("CancelJob", coordinator_pb2.CancelJobRequest(job_id=self.id))
        return JobState.of(self._message.state)

    def _report(self):
        return self._client._call("GetJobReport", coordinator_pb2.GetJobReportRequest(job_id=self.id))

    def report(self, as_dataframe=False):
        """The epoch rows reported so far, as epochs.csv has them (gantry.report): a list
        of dicts, by batch size in spec order, then epoch; or a pandas DataFrame."""
        rows = [row_of(m) for m in self._report().epochs]
        return rows_as_dataframe(rows, columns(), "Job.report") if as_dataframe else rows

    def report_csv(self):
        """The epoch rows as the run folder's epochs.csv, byte for byte."""
        return epochs_csv(self.report())

    def timing(self):
        """The batch-size timing table (gantry.timing.Timing), as `gantry report` prints it."""
        return timing_of(self._report())

    def rollout(self, case_dir, steps, **options):
        """Queues a rollout of this finished pix2pix flow run over the flow case `case_dir`
        (see Client.rollout for the options); returns the rollout's Job."""
        return self._client.rollout(self.id, case_dir, steps, **options)

    def generate(self, count=None, **options):
        """Queues samples from this finished run's generator (see Client.generate for the
        options): `count` samples into RUN/generate-<name>/ of its run folder; returns the
        generate's Job."""
        return self._client.generate(self.id, count, **options)

