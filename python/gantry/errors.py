"""The client's exceptions: every failure is a GantryError, named for what it means.

A failed gRPC call is never raised as grpc.RpcError: from_rpc_error() turns its status
code into one of the classes below (as `gantry` turns it into an exit code, see
cli/rpc_exit_codes.cc), keeping the coordinator's message, which names the field and the fix.
Each class also derives from the built-in exception of the same meaning (ValueError,
LookupError, ...), so code that does not know gantry can still catch it sensibly.
"""
import grpc


class GantryError(Exception):
    """Any failure of the gantry client. `code` is the gRPC status code's name
    ("NOT_FOUND", ...) when the coordinator answered with an error, else None."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        self.code = code


class InvalidSpec(GantryError, ValueError):
    """A setting or request the coordinator refused (INVALID_ARGUMENT, OUT_OF_RANGE), or
    one refused here before sending: an unknown setting, a value of the wrong type, a bad
    run file. The message names the setting and what it accepts."""


class NotFound(GantryError, LookupError):
    """No such job (NOT_FOUND)."""


class Unauthenticated(GantryError, PermissionError):
    """A missing or wrong token (UNAUTHENTICATED, PERMISSION_DENIED)."""


class Unavailable(GantryError, ConnectionError):
    """The coordinator cannot be reached (UNAVAILABLE), or stayed unreachable longer than
    a watch's reconnect bound."""


class Timeout(GantryError, TimeoutError):
    """A call's deadline (DEADLINE_EXCEEDED), or a watch or wait that ran out of time
    before the job ended."""


class Conflict(GantryError):
    """The job's state forbids the request (FAILED_PRECONDITION, ABORTED, ALREADY_EXISTS),
    e.g. cancelling a job that has ended, or rolling out one that has not succeeded."""


class ConfigurationError(GantryError, ValueError):
    """The client's own settings are unusable: no address, a port out of range, an
    unreadable token or CA file, a token that is not printable ASCII."""


class NotOffered(GantryError, NotImplementedError):
    """The coordinator offers no RPC for what was asked."""


class CoordinatorError(GantryError):
    """Any other failure the coordinator reported (INTERNAL, UNKNOWN, ...)."""


_CLASS_OF_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidSpec,
    grpc.StatusCode.OUT_OF_RANGE: InvalidSpec,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: Unauthenticated,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Timeout,
    grpc.StatusCode.FAILED_PRECONDITION: Conflict,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.ALREADY_EXISTS: Conflict,
}


def from_rpc_error(error, address):
    """The GantryError for a failed call to the coordinator at `address`."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = (error.details() if hasattr(error, "details") else None) or str(error)
    cls = _CLASS_OF_CODE.get(code, CoordinatorError)
    if cls is Unavailable:
        details = ("cannot reach the coordinator at {} ({}); is gantry-coordinator running there? "
                   "Pass address= or set GANTRY_COORDINATOR").format(address, details)
    return cls(details, code=code.name)
