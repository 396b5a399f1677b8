"""How a Client finds the coordinator and its token, as `gantry` does; and the stubs
it was built with match the protos of this checkout. No coordinator needed."""
import glob
import os
import socket
import time

import pytest
from google.protobuf import descriptor_pb2

import gantry
from gantry.connection import DEFAULT_ADDRESS, resolve_target

PROTO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "proto")


def test_arguments_then_the_environment_then_the_clis_default(no_gantry_environment, monkeypatch, tmp_path):
    assert resolve_target().address == DEFAULT_ADDRESS == "127.0.0.1:50051"
    assert resolve_target().token == "" and not resolve_target().tls
    monkeypatch.setenv("GANTRY_COORDINATOR", "coordinator.example:7000")
    token_file = tmp_path / "token"
    token_file.write_text("  from-a-file\n")
    monkeypatch.setenv("GANTRY_TOKEN", str(token_file))
    target = resolve_target()
    assert (target.address, target.token) == ("coordinator.example:7000", "from-a-file")
    target = resolve_target("127.0.0.1:1234", "given", tls_ca="/ca.pem")
    assert (target.address, target.token, target.tls_ca, target.tls) == ("127.0.0.1:1234", "given", "/ca.pem", True)


@pytest.mark.parametrize("address, expected", [
    ("127.0.0.1:70000", "address= 127.0.0.1:70000: port 70000 is out of range; give a port in 1..65535"),
    ("127.0.0.1:0", "port 0 is out of range"),
    ("127.0.0.1:-1", "port -1 is not a port number"),
    ("127.0.0.1:", "no port after ':'"),
])
def test_a_bad_port_is_refused_naming_where_it_came_from(no_gantry_environment, address, expected):
    with pytest.raises(gantry.ConfigurationError, match=expected):
        gantry.Client(address)


def test_a_bad_port_from_the_environment_names_the_variable(no_gantry_environment, monkeypatch):
    monkeypatch.setenv("GANTRY_COORDINATOR", "localhost:99999")
    with pytest.raises(gantry.ConfigurationError, match="GANTRY_COORDINATOR localhost:99999: port 99999"):
        gantry.Client()


def test_a_token_that_is_not_printable_ascii_is_refused(no_gantry_environment, tmp_path):
    with pytest.raises(gantry.ConfigurationError, match="token=: the token holds a byte that is not printable"):
        gantry.Client("127.0.0.1:1", token="ab\x01cd")
    blank = tmp_path / "blank"
    blank.write_text("\n\n")
    with pytest.raises(gantry.ConfigurationError, match="token= file .*blank: the token is empty"):
        gantry.Client("127.0.0.1:1", token=str(blank))


def test_a_token_too_long_for_a_header_is_refused_before_any_call(no_gantry_environment):
    # gRPC's own error would be about metadata; the client names the token and its length.
    with pytest.raises(gantry.ConfigurationError, match="token=: the token has 102400 characters, more than the 4096"):
        gantry.Client("127.0.0.1:1", token="a" * 102400)
    assert gantry.Client("127.0.0.1:1", token="a" * 4096)


def test_arguments_of_the_wrong_type_raise_invalid_spec_before_any_call(no_gantry_environment):
    # Protobuf would raise a bare TypeError; nothing listens at port 1, so nothing is sent.
    client = gantry.Client("127.0.0.1:1")
    with pytest.raises(gantry.InvalidSpec, match="submit: name: bad value 5 of type int \\(a string\\)"):
        client.submit(name=5)
    with pytest.raises(gantry.InvalidSpec, match="generate: label: bad value 5 of type int"):
        client.generate("job-1", count=1, label=5)
    with pytest.raises(gantry.InvalidSpec, match="generate: name: bad value b'x' of type bytes"):
        client.generate("job-1", count=1, name=b"x")
    with pytest.raises(gantry.InvalidSpec, match="rollout: world_size: bad value '2' \\(an integer\\)"):
        client.rollout("job-1", "/tmp", 3, world_size="2")
    # A huge value is quoted in part.
    with pytest.raises(gantry.InvalidSpec, match="\\.\\.\\. \\(100003 characters\\) of type bytes"):
        client.submit(name=b"x" * 100000)


def test_an_unreadable_ca_file_is_refused(no_gantry_environment, tmp_path):
    with pytest.raises(gantry.ConfigurationError, match="tls_ca: cannot read .*missing.pem"):
        gantry.Client("127.0.0.1:1", tls_ca=str(tmp_path / "missing.pem"))


def test_nobody_listening_is_unavailable_naming_the_address(no_gantry_environment):
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(gantry.Unavailable) as refused:
        gantry.Client("127.0.0.1:{}".format(port), timeout=5).jobs()
    assert time.monotonic() - started < 10
    assert "cannot reach the coordinator at 127.0.0.1:{}".format(port) in str(refused.value)
    assert refused.value.code == "UNAVAILABLE" and isinstance(refused.value, gantry.GantryError)


def test_the_installed_stubs_are_those_of_this_checkouts_protos(tmp_path):
    """The stubs are generated at build time; an install from another checkout (or an old
    build) would describe other messages."""
    import grpc_tools
    from grpc_tools import protoc
    protos = sorted(glob.glob(os.path.join(PROTO_ROOT, "gantry", "v1", "*.proto")))
    assert len(protos) >= 5, PROTO_ROOT
    out = str(tmp_path / "set.pb")
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    assert protoc.main(["protoc", "-I" + PROTO_ROOT, "-I" + well_known, "--descriptor_set_out=" + out] + protos) == 0
    fresh = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fresh.ParseFromString(f.read())
    assert sorted(f.name for f in fresh.file) == ["gantry/v1/" + os.path.basename(p) for p in protos]
    for expected in fresh.file:
        module = getattr(gantry.v1, os.path.basename(expected.name)[:-len(".proto")] + "_pb2")
        installed = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(installed)
        expected.ClearField("source_code_info")
        _clear_json_names(expected)  # CopyToProto leaves them out
        _clear_json_names(installed)
        assert installed == expected, expected.name


def _clear_json_names(file_proto):
    pending = list(file_proto.message_type)
    while pending:
        message = pending.pop()
        for field in message.field:
            field.ClearField("json_name")
        pending.extend(message.nested_type)
