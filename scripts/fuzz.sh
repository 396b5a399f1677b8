#!/usr/bin/env bash
# Long fuzzing runs: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#
# TARGET is one of tests/fuzz/*_fuzz.cc without the suffix (idx_reader, npy, checkpoint,
# run_file, run_spec). Builds build-fuzz/ with clang (-DGANTRY_FUZZ=ON: libFuzzer,
# ASan+UBSan) and fuzzes for SECONDS on one core, niced, starting from the committed
# seeds. What it learns stays in build-fuzz/fuzz-work/TARGET (reused by the next run);
# a crashing input lands in build-fuzz/artifacts/TARGET/. To keep one, copy it into
# tests/fuzz/corpus/TARGET/ as crash-<what> with the fix, so every build replays it.
# Needs Debian's clang and libfuzzer-14-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 2)); then
  echo "usage: $0 TARGET SECONDS [libFuzzer flags...]  (targets: $(cd tests/fuzz && ls ./*_fuzz.cc | sed 's|./||; s|_fuzz.cc||' | tr '\n' ' '))" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
if [[ ! -f tests/fuzz/${target}_fuzz.cc ]]; then
  echo "fuzz.sh: no fuzz target '${target}' (tests/fuzz/${target}_fuzz.cc)" >&2
  exit 2
fi
build=${GANTRY_FUZZ_BUILD:-build-fuzz}
if [[ ! -f ${build}/CMakeCache.txt ]]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  CC=clang CXX=clang++ cmake -S . -B "${build}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_FUZZ=ON \
    -DGANTRY_CUDA=OFF -DGANTRY_ONEDNN=OFF -DGANTRY_BUILD_BENCHMARKS=OFF "${launcher[@]}"
fi
nice -n 5 cmake --build "${build}" -j"${GANTRY_JOBS:-2}" --target "fuzz_${target}"
work=${build}/fuzz-work/${target}
artifacts=${build}/artifacts/${target}
mkdir -p "${work}" "${artifacts}"
# The first folder receives what the fuzzer learns; the committed seeds are read only.
exec nice -n 10 "${build}/bin/fuzz_${target}" -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="${artifacts}/" "$@" "${work}" "tests/fuzz/corpus/${target}"
