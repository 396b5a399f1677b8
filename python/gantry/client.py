"""The client of a gantry coordinator: submit runs and rollouts, list jobs and groups.

Every call carries the token (when there is one) and a deadline (`timeout`, 30 s as
`gantry --timeout`); a failed call raises its GantryError (gantry.errors), never
grpc.RpcError.
"""
import os

import grpc

from gantry._stubs import coordinator_pb2, coordinator_pb2_grpc, generate_spec_pb2, rollout_spec_pb2
from gantry.connection import call_metadata, open_channel, resolve_target
from gantry.errors import ConfigurationError, InvalidSpec, from_rpc_error
from gantry.job import Job
from gantry.run_file import read_run_file
from gantry.settings import build_run_spec
from gantry.states import JobState, group_state_name


class Client:
    """A connection to the coordinator at `address` (else $GANTRY_COORDINATOR, else
    127.0.0.1:50051), with `token` (the token or a file holding it; else $GANTRY_TOKEN),
    over TLS when `tls_ca` (the PEM file of the CA that signed the coordinator's
    certificate) or `tls` (the system's CAs) is given. Nothing is sent until a call."""

    def __init__(self, address=None, token=None, tls_ca=None, *, tls=False, timeout=30.0):
        if not timeout > 0:
            raise ConfigurationError("timeout: must be a positive number of seconds, not {!r}".format(timeout))
        self._target = resolve_target(address, token, tls_ca, tls)
        self._timeout = float(timeout)
        self._channel = open_channel(self._target)
        self._stub = coordinator_pb2_grpc.CoordinatorStub(self._channel)

    @property
    def address(self):
        return self._target.address

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Client({!r})".format(self.address)

    def _call(self, method, request, timeout=None):
        try:
            return getattr(self._stub, method)(request, timeout=timeout or self._timeout,
                                               metadata=call_metadata(self._target.token))
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.address) from None

    def _stream(self, method, request, timeout):
        return getattr(self._stub, method)(request, timeout=timeout, metadata=call_metadata(self._target.token))

    def submit(self, run_file=None, *, world_size=0, max_attempts=0, name="", **settings):
        """Queues a training run and returns its Job. `settings` are the run's settings by
        keyword, every `gantry-worker train` setting with '_' for '-' (model="dcgan",
        dataset="fashion-mnist", data_dir=..., batch_size=[64, 512], epochs=3, ...;
        gantry.settings.keywords() lists them); `run_file` a YAML/JSON file of them, the
        keywords overriding it, as `gantry submit RUN_FILE --flags` does. Unset settings
        take the worker's defaults. `world_size`: the ranks it needs (0: any group whose
        size fits the batch); `max_attempts`: 0 for the coordinator's default.
        InvalidSpec naming the setting for an unknown setting (with the closest name), a
        value of the wrong type, or one the coordinator refuses."""
        spec = build_run_spec(read_run_file(run_file), os.fspath(run_file) + ": ") if run_file is not None \
            else None
        spec = build_run_spec(settings, "", spec)
        request = coordinator_pb2.SubmitJobRequest(spec=spec, **_job_fields("submit", world_size, max_attempts,
                                                                            name=name))
        return Job(self, self._call("SubmitJob", request))

    def rollout(self, source_job, case_dir, steps, *, start_frame=None, tile=None, overlap=None, blend="",
                group=None, tile_batch=None, report_every=None, world_size=0, max_attempts=0, name=""):
        """Queues a rollout of the finished pix2pix flow run `source_job` (a Job or its id)
        over the flow case folder `case_dir` for `steps` model steps, into that run's
        folder (as `gantry rollout`); unset options keep `gantry-worker rollout`'s
        defaults. Returns the rollout's Job. The coordinator refuses, naming the field: a
        source that is not a finished pix2pix flow run (Conflict when it has not
        succeeded), a case outside its data roots, a bad tile, overlap or blend."""
        source_id = source_job.id if isinstance(source_job, Job) else str(source_job)
        spec = rollout_spec_pb2.RolloutSpec(source_job_id=source_id, steps=_int("steps", steps),
                                            blend=_str("blend", blend),
                                            case_dir=os.path.normpath(os.path.abspath(os.fspath(case_dir))))
        for field, value in (("start_frame", start_frame), ("tile", tile), ("overlap", overlap),
                             ("group", group), ("tile_batch", tile_batch), ("report_every", report_every)):
            if value is not None:
                getattr(spec, field).value = _int(field, value)
        request = coordinator_pb2.SubmitJobRequest(rollout=spec, **_job_fields("rollout", world_size, max_attempts,
                                                                               name=name))
        return Job(self, self._call("SubmitJob", request))

    def generate(self, source_job, count=None, *, seed=None, name="", checkpoint=None, precision="", batch=None,
                 interpolate="", steps=None, case_dir=None, frame=None, world_size=0, max_attempts=0, label=""):
        """Queues samples from the finished run `source_job` (a Job or its id), as `gantry
        generate` does: `count` samples (1 to 100000) from latent vectors seeded by `seed`,
        or a walk `interpolate="A,B"` of `steps` points, into RUN/generate-<name>/ of that
        run (`name` defaults to the new job's id, so no job writes over another's); a
        pix2pix flow run generates from the frames of the flow case `case_dir` from
        `frame`. Unset options keep `gantry-worker generate`'s defaults. Returns the
        generate's Job. The coordinator refuses, naming the field: a source that is not a
        finished training run (Conflict when it has not succeeded), a bad name, count,
        precision or walk, options of the other kind of model."""
        source_id = source_job.id if isinstance(source_job, Job) else str(source_job)
        spec = generate_spec_pb2.GenerateSpec(source_job_id=source_id, name=_str("name", name, "generate"),
                                              precision=_str("precision", precision, "generate"),
                                              interpolate=_str("interpolate", interpolate, "generate"))
        if case_dir is not None:
            spec.case_dir = os.path.normpath(os.path.abspath(os.fspath(case_dir)))
        for field, value in (("count", count), ("seed", seed), ("checkpoint", checkpoint), ("batch", batch),
                             ("steps", steps), ("frame", frame)):
            if value is not None:
                getattr(spec, field).value = _int(field, value, "generate")
        request = coordinator_pb2.SubmitJobRequest(generate=spec, **_job_fields("generate", world_size,
                                                                                max_attempts, label=label))
        return Job(self, self._call("SubmitJob", request))

    def job(self, job_id):
        """The Job of `job_id` (NotFound when there is none)."""
        return Job(self, self._call("GetJob", coordinator_pb2.GetJobRequest(job_id=job_id)))

    def jobs(self, state=None):
        """Every job in submission order, or only those in `state` (a JobState or its name,
        e.g. "running")."""
        request = coordinator_pb2.ListJobsRequest(page_size=1000)
        if state is not None:
            try:
                request.state = JobState.parse(state).value
            except ValueError as e:
                raise InvalidSpec("jobs: " + str(e)) from None
        jobs = []
        while True:
            page = self._call("ListJobs", request)
            jobs.extend(Job(self, message) for message in page.jobs)
            if not page.next_page_token:
                return jobs
            request.page_token = page.next_page_token

    def groups(self):
        """The worker groups the coordinator knows, as dicts (id, name, world_size, hosts,
        devices, state: "idle" | "busy" | "lost", job_id, registered_unix_ms,
        seconds_since_heartbeat)."""
        reply = self._call("ListGroups", coordinator_pb2.ListGroupsRequest())
        return [{"id": g.id, "name": g.name, "world_size": g.world_size, "hosts": list(g.hosts),
                 "devices": list(g.devices), "state": group_state_name(g.state),
                 "job_id": g.job_id, "registered_unix_ms": g.registered_unix_ms,
                 "seconds_since_heartbeat": g.seconds_since_heartbeat} for g in reply.groups]


def _int(name, value, kind="rollout"):
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSpec("{}: {}: bad value {} (an integer)".format(kind, name, _excerpt(value)))
    return value


def _str(name, value, kind="rollout"):
    """A text argument, checked before protobuf sees it (which raises a bare TypeError)."""
    if not isinstance(value, str):
        raise InvalidSpec("{}: {}: bad value {} of type {} (a string)".format(kind, name, _excerpt(value),
                                                                                 type(value).__name__))
    return value


def _job_fields(kind, world_size, max_attempts, **name):
    """SubmitJobRequest's fields of every kind of job, checked: world_size and
    max_attempts integers, the name (or label) a string."""
    (field, value), = name.items()
    return {"world_size": _int("world_size", world_size, kind), "max_attempts": _int("max_attempts", max_attempts, kind),
            "name": _str(field, value, kind)}


def _excerpt(value):
    """A value as a message shows it: its repr, cut after 200 characters."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "... ({} characters)".format(len(text))
