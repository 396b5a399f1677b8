"""The gRPC stubs generated from proto/gantry/v1 when the package was built (setup.py).

Imported from here only, so that running from a source checkout without building gives
one clear error instead of a bare ModuleNotFoundError.
"""
try:
    from gantry.v1 import coordinator_pb2, coordinator_pb2_grpc, job_pb2, metrics_pb2, rollout_spec_pb2
    from gantry.v1 import generate_spec_pb2, run_spec_pb2
except ImportError as e:  # pragma: no cover - depends on how the package was installed
    raise ImportError(
        "gantry's gRPC stubs (gantry.v1) are missing: they are generated from proto/ when the package is "
        "built. Install it from a gantry checkout into a virtual environment that sees Debian's packages "
        "(python3-grpc-tools, python3-venv): `/usr/bin/python3 -m venv --system-site-packages VENV` then "
        "`VENV/bin/python -m pip install --no-build-isolation --no-index ./python` (docs/python.md); "
        "importing gantry from the source folder does not work. (" + str(e) + ")") from e

__all__ = ["coordinator_pb2", "coordinator_pb2_grpc", "generate_spec_pb2", "job_pb2", "metrics_pb2",
           "rollout_spec_pb2", "run_spec_pb2"]
