"""A job's state, as gantry.v1.JobState, by the names `gantry` prints (queued, running,
cancelling, succeeded, failed, cancelled), and a group's (idle, busy, lost), derived from
the generated enum, so a state added to proto/ is named here without an edit."""
import enum

from gantry._stubs import job_pb2


class JobState(enum.Enum):
    QUEUED = job_pb2.JOB_STATE_QUEUED          # waiting for an idle group of its size
    RUNNING = job_pb2.JOB_STATE_RUNNING        # held by a group under a lease
    CANCELLING = job_pb2.JOB_STATE_CANCELLING  # cancel asked; the group stops at its next report
    SUCCEEDED = job_pb2.JOB_STATE_SUCCEEDED
    FAILED = job_pb2.JOB_STATE_FAILED
    CANCELLED = job_pb2.JOB_STATE_CANCELLED
    UNSPECIFIED = job_pb2.JOB_STATE_UNSPECIFIED  # a newer coordinator's state this client does not know

    @classmethod
    def of(cls, value):
        """The state of a gantry.v1.JobState number (UNSPECIFIED for one unknown here)."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNSPECIFIED

    @property
    def ended(self):
        """True for the states a job never leaves."""
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)

    def __str__(self):
        return self.name.lower()

    @classmethod
    def parse(cls, name):
        """A JobState, or its name as `gantry jobs --state` takes it ("running"); ValueError
        naming the states for anything else."""
        if isinstance(name, cls):
            return name
        key = str(name).upper()
        key = key[len("JOB_STATE_"):] if key.startswith("JOB_STATE_") else key
        if key in cls.__members__ and key != "UNSPECIFIED":
            return cls[key]
        raise ValueError("unknown job state {!r}; one of {}".format(
            name, ", ".join(str(s) for s in cls if s is not cls.UNSPECIFIED)))


_GROUP_STATE_PREFIX = "GROUP_STATE_"


def group_state_name(value):
    """The name `gantry groups` prints for a gantry.v1.GroupState number ("idle", "busy",
    "lost"): the enum's name without its prefix, lower case; "unspecified" for
    GROUP_STATE_UNSPECIFIED and for a number unknown here (a newer coordinator's)."""
    try:
        name = job_pb2.GroupState.Name(value)
    except ValueError:
        return "unspecified"
    return name[len(_GROUP_STATE_PREFIX):].lower()
