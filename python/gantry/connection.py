"""Where the coordinator is and how the client proves who it is, read as `gantry` reads
them (channel/coordinator_target.cc, channel/client_channel.cc): an argument, else the
environment (GANTRY_COORDINATOR, GANTRY_TOKEN), else the CLI's default address. The CLI
reads no other variable: TLS is asked for with arguments only (tls_ca=, tls=), as with
its --tls-ca and --tls flags.
"""
import collections
import os
import re

import grpc

from gantry.errors import ConfigurationError

DEFAULT_ADDRESS = "127.0.0.1:50051"  # gantry's --coordinator default (cli/connection.h)

# Keepalive pings, as the CLI sends (SetClientKeepalive), so a watch notices a coordinator
# that vanished; and reconnect attempts at most 2 s apart (gRPC's own backoff grows to
# 120 s), so a watch picks up a restarted coordinator within its reconnect bound.
_CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20000),
    ("grpc.keepalive_timeout_ms", 10000),
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 2000),
]

Target = collections.namedtuple("Target", "address token tls_ca tls")


def resolve_target(address=None, token=None, tls_ca=None, tls=False):
    """The Target for the given arguments, the environment filling what is None or empty.
    ConfigurationError naming the argument or variable for a port out of 1..65535, an
    unreadable token file, or a token that is not printable ASCII."""
    source = "address="
    if not address:
        address, source = os.environ.get("GANTRY_COORDINATOR", ""), "GANTRY_COORDINATOR"
    if not address:
        address = DEFAULT_ADDRESS
    _check_port(source, address)
    token_source = "token="
    if not token:
        token, token_source = os.environ.get("GANTRY_TOKEN", ""), "GANTRY_TOKEN"
    return Target(address, resolve_token(token, token_source), tls_ca or "", bool(tls or tls_ca))


def resolve_token(given, source):
    """A token given as the path of a regular file is read from it (so it stays out of
    `ps` and shell history); anything else is the token. Either way surrounding
    whitespace is removed and the rest must be printable ASCII, as the CLI requires."""
    if not given:
        return ""
    if os.path.isfile(given):
        try:
            with open(given, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise ConfigurationError("{}: cannot read token file {}: {}".format(source, given, e.strerror))
        return _clean_token(raw.decode("latin-1"), "{} file {}".format(source, given))
    return _clean_token(given, source)


# The longest token a call can carry: gRPC refuses a call whose headers pass its 8 KiB
# metadata limit with an error about metadata, not about the token.
MAX_TOKEN_CHARS = 4096


def _clean_token(raw, source):
    token = raw.strip(" \t\n\r\f\v")
    if not token:
        raise ConfigurationError(source + ": the token is empty; give the coordinator's token "
                                 "(make one with `openssl rand -hex 32`)")
    if len(token) > MAX_TOKEN_CHARS:
        raise ConfigurationError("{}: the token has {} characters, more than the {} a call's header can carry; "
                                 "give the coordinator's token (e.g. from `openssl rand -hex 32`)".format(
                                     source, len(token), MAX_TOKEN_CHARS))
    for i, ch in enumerate(token):
        if not " " <= ch <= "~":
            raise ConfigurationError(
                "{}: the token holds a byte that is not printable ASCII ({!r} at offset {}); a token is "
                "printable ASCII, e.g. from `openssl rand -hex 32`".format(source, ch, i))
    return token


def _check_port(source, address):
    """A numeric port after the last ':' must be in 1..65535 (a name is gRPC's to resolve)."""
    if ":" not in address:
        return
    port = address.rsplit(":", 1)[1]
    if not port:
        raise ConfigurationError("{} {}: no port after ':'; give HOST:PORT with a port in 1..65535".format(
            source, address))
    if re.fullmatch(r"[+-]?[0-9]+", port) and not (port[0].isdigit() and 1 <= int(port) <= 65535):
        raise ConfigurationError("{} {}: port {} is {}; give a port in 1..65535".format(
            source, address, port, "out of range" if port[0].isdigit() else "not a port number"))


def open_channel(target):
    """A channel to `target`: TLS when asked (tls_ca: the PEM file of the CA that signed
    the coordinator's certificate; else the system's roots), plaintext otherwise."""
    if not target.tls:
        return grpc.insecure_channel(target.address, options=_CHANNEL_OPTIONS)
    roots = None
    if target.tls_ca:
        try:
            with open(target.tls_ca, "rb") as f:
                roots = f.read()
        except OSError as e:
            raise ConfigurationError("tls_ca: cannot read {}: {}".format(target.tls_ca, e.strerror))
    credentials = grpc.ssl_channel_credentials(root_certificates=roots)
    return grpc.secure_channel(target.address, credentials, options=_CHANNEL_OPTIONS)


def call_metadata(token):
    """The `authorization: Bearer` header every call carries when there is a token."""
    return (("authorization", "Bearer " + token),) if token else ()
