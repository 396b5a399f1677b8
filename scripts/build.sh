#!/usr/bin/env bash
# Configures and builds gantry into build/ (Release, 2 parallel jobs by default).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"${GANTRY_JOBS:-2}"
