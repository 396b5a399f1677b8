#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine: install, build, run ctest.
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 600
