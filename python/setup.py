"""Builds the gantry client, generating its gRPC stubs from the repository's proto/.

The stubs (gantry/v1/*_pb2.py, *_pb2_grpc.py) are generated at build time with
grpc_tools.protoc (Debian: python3-grpc-tools) straight into the build folder, never
into the source tree, so an installed client always speaks the protocol of the checkout
it was built from and nothing generated is committed. The protos are looked for in
$GANTRY_PROTO_DIR, else ../proto next to this file (a checkout of the repository).
"""
import glob
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_root():
    """The folder holding gantry/v1/*.proto; SystemExit naming the fix when none is found."""
    candidates = [os.environ.get("GANTRY_PROTO_DIR", ""), os.path.join(HERE, os.pardir, "proto")]
    for root in candidates:
        if root and glob.glob(os.path.join(root, "gantry", "v1", "*.proto")):
            return os.path.abspath(root)
    raise SystemExit("gantry-client: no gantry/v1/*.proto under " + " or ".join(c for c in candidates if c) +
                     "; build from a gantry checkout (pip install ./python) or set GANTRY_PROTO_DIR")


def generate_stubs(out_dir):
    """Runs grpc_tools.protoc over proto/gantry/v1/*.proto into out_dir/gantry/v1."""
    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError:
        raise SystemExit("gantry-client: generating the gRPC stubs needs grpc_tools: "
                         "apt-get install python3-grpc-tools (then build with --no-build-isolation)")
    root = proto_root()
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    protos = sorted(glob.glob(os.path.join(root, "gantry", "v1", "*.proto")))
    args = ["grpc_tools.protoc", "-I" + root, "-I" + well_known, "--python_out=" + out_dir,
            "--grpc_python_out=" + out_dir] + protos
    if protoc.main(args) != 0:
        raise SystemExit("gantry-client: grpc_tools.protoc failed on " + root)
    package = os.path.join(out_dir, "gantry", "v1")
    with open(os.path.join(package, "__init__.py"), "w") as init:
        init.write('"""gRPC stubs generated from proto/gantry/v1 when this package was built."""\n')


class BuildWithStubs(build_py):
    """build_py, then the stubs into the build folder next to the package's modules."""

    def run(self):
        super().run()
        if not self.dry_run:
            generate_stubs(self.build_lib)


setup(cmdclass={"build_py": BuildWithStubs})
