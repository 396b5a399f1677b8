#!/usr/bin/env bash
# The Python client's tests (python/tests) as one CTest: builds and installs the package
# the way a user does, offline with Debian's packages (its gRPC stubs generated from
# proto/ by setup.py), then runs pytest against the given binaries.
# Usage: run_tests.sh COORDINATOR_BIN WORKER_BIN GANTRY_BIN MPIEXEC [PYTEST_ARGS...]
# Everything is built, installed and written in a fresh scratch folder (the source tree
# is copied there first, since pip builds in place), removed at the end.
set -euo pipefail
# Absolute, since the tests run from the scratch folder.
export GANTRY_COORDINATOR_BIN=$(realpath -ms "$1") GANTRY_WORKER_BIN=$(realpath -ms "$2") \
  GANTRY_CLI_BIN=$(realpath -ms "$3") GANTRY_MPIEXEC=$(realpath -ms "$4")
shift 4
python=/usr/bin/python3  # Debian's: python3-grpcio, python3-protobuf, python3-grpc-tools from apt
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/python"
cp -r "$source_dir/proto" "$work/src/"
cp -r "$source_dir/python/pyproject.toml" "$source_dir/python/setup.py" "$source_dir/python/README.md" \
  "$source_dir/python/gantry" "$source_dir/python/tests" "$work/src/python/"

# --no-index: nothing may come from the network; --no-build-isolation: Debian's setuptools
# and grpc_tools build it; --target: into the scratch folder, not the system.
"$python" -m pip install --quiet --root-user-action=ignore --no-index --no-build-isolation --no-deps --target "$work/site" \
  "$work/src/python"

cd "$work"
PYTHONPATH="$work/site" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -p no:cacheprovider \
  --basetemp "$work/pytest" -v -rs "$work/src/python/tests" "$@"
