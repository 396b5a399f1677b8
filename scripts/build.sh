#!/usr/bin/env bash
# Configures and builds gantry (Release, 2 parallel jobs by default; ccache when it is
# installed, which scripts/install_deps.sh does).
#
#   bash scripts/build.sh                  the programs: gantry-worker, gantry, gantry-coordinator
#   bash scripts/build.sh --tests          and the tests (what scripts/test.sh builds)
#   bash scripts/build.sh --benchmarks     and the benchmarks of bench/
#   bash scripts/build.sh --dir DIR ...    into DIR instead of build/
#   bash scripts/build.sh --no-unity ...   one translation unit per source (see below)
# Sources are compiled in unity batches (GANTRY_UNITY_BUILD: each target's sources in
# groups of 8 as one translation unit, about half the cold build time on 2 cores);
# --no-unity compiles them one by one, which suits editing one file at a time.
# Further arguments go to cmake's configure step (e.g. -DGANTRY_CUDA=OFF).
# GANTRY_JOBS sets the parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build tests=OFF benchmarks=OFF unity=ON
cmake_args=()
while (($#)); do
  case $1 in
    --tests) tests=ON ;;
    --benchmarks) benchmarks=ON ;;
    --no-unity) unity=OFF ;;
    --dir) dir=$2; shift ;;
    *) cmake_args+=("$1") ;;
  esac
  shift
done
launcher=()
if command -v ccache >/dev/null; then
  # Paths under the checkout hash relatively, so two checkouts share cache entries.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# Ninja when installed (scripts/install_deps.sh does), for a new build folder: it starts a
# target's compiles as soon as the headers they include exist, where make waits for every
# library the target links, so both cores stay busy. A folder already configured keeps
# its generator (CMake refuses to change it).
generator=()
if [[ ! -e $dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGANTRY_BUILD_TESTS="$tests" -DGANTRY_BUILD_BENCHMARKS="$benchmarks" \
  -DGANTRY_UNITY_BUILD="$unity" \
  "${launcher[@]}" "${cmake_args[@]}"
cmake --build "$dir" -j"${GANTRY_JOBS:-2}"
