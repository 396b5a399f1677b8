"""gantry: a Python client of the gantry coordinator (docs/python.md).

    import gantry
    client = gantry.Client()                      # GANTRY_COORDINATOR, GANTRY_TOKEN
    job = client.submit(model="dcgan", dataset="fashion-mnist", batch_size=[64, 512], epochs=3)
    for event in job.watch():
        print(event)
    rows = job.report()                           # epochs.csv's rows
    print(job.timing())                           # the batch-size table of `gantry report`

The gRPC stubs (gantry.v1) are generated from the repository's proto/ when the package is
built.
"""
from gantry.client import Client
from gantry.errors import (ConfigurationError, Conflict, CoordinatorError, GantryError, InvalidSpec, NotFound,
                           NotOffered, Timeout, Unauthenticated, Unavailable)
from gantry.events import EpochEnded, Progress, StateChanged, Straggler
from gantry.job import Job
from gantry.settings import keywords as setting_names
from gantry.states import JobState
from gantry.timing import Timing

__version__ = "0.1.0"

__all__ = ["Client", "Job", "JobState", "Timing", "GantryError", "InvalidSpec", "NotFound", "Unauthenticated",
           "Unavailable", "Timeout", "Conflict", "ConfigurationError", "NotOffered", "CoordinatorError",
           "StateChanged", "Progress", "EpochEnded", "Straggler", "setting_names"]
