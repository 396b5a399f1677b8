"""Following a job's events across coordinator restarts, as `gantry watch` does
(cli/watch_command.cc).

The stream's only deadline is what is left of the whole watch (`timeout`). When the
coordinator goes away (UNAVAILABLE: killed, restarting, a network cut), the watch asks
again, with a backoff up to 1 s, for at most `reconnect` seconds of unbroken
unavailability, resuming after the last stored entry it saw, so nothing is yielded twice
or skipped. Any other failure is raised at once as its GantryError.
"""
import time

import grpc

from gantry._stubs import coordinator_pb2
from gantry.errors import Timeout, from_rpc_error


class Reconnecting:
    """The unbroken unavailability of the coordinator: since when, and the next backoff."""

    def __init__(self, bound_seconds):
        self.bound_seconds = bound_seconds
        self.since = None
        self.backoff = 0.25

    def reached(self):
        """Resets after a stream delivered something."""
        self.since = None
        self.backoff = 0.25

    def wait_or_give_up(self, deadline):
        """Sleeps before the next try; False when the bound (or the watch's deadline) is past."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if now - self.since > self.bound_seconds or now + self.backoff >= deadline:
            return False
        time.sleep(self.backoff)
        self.backoff = min(self.backoff * 2, 1.0)
        return True


def follow(client, job_id, timeout, reconnect):
    """gantry.v1.JobEvent messages of `job_id` until the job ends. Raises Timeout when
    `timeout` seconds pass first, Unavailable when the coordinator stays unreachable for
    `reconnect` seconds, and the matching GantryError for any other failure."""
    deadline = time.monotonic() + timeout
    after = 0
    retry = Reconnecting(reconnect)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout("watch: gave up after {:g} s; {} has not ended".format(timeout, job_id))
        request = coordinator_pb2.WatchJobRequest(job_id=job_id, after_sequence=after)
        stream = client._stream("WatchJob", request, left)
        try:
            for event in stream:
                retry.reached()
                if event.WhichOneof("kind") != "progress":
                    after = event.sequence
                yield event
            return
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise Timeout("watch: gave up after {:g} s; {} has not ended".format(timeout, job_id),
                              code=e.code().name) from None
            if e.code() != grpc.StatusCode.UNAVAILABLE or not retry.wait_or_give_up(deadline):
                raise from_rpc_error(e, client.address) from None
        finally:
            stream.cancel()
