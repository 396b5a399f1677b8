#!/usr/bin/env bash
# Sanitizer builds of the test suite; fails on any report.
#   build-asan/  -DGANTRY_SANITIZER=address,undefined (ASan, LeakSanitizer, UBSan)
#   build-tsan/  -DGANTRY_SANITIZER=thread
# What each covers is the list of test binaries below (CTest labels); see docs/testing.md.
# Tests run with halt_on_error, and every report, also from programs a test
# starts (gantry-worker, gantry-coordinator, gantry), whose output the test may swallow,
# is written under <build>/sanitizer-reports/: the script fails unless it stays empty.
# Suppressions (third-party code only, each with its reason) are in tests/sanitizers/.
#
#   scripts/sanitizers.sh            both
#   scripts/sanitizers.sh asan|tsan  one
#   scripts/sanitizers.sh asan|tsan|all --build-only   the builds, no tests (scripts/test.sh
#                                    builds them in the background while other stages run)
# GANTRY_JOBS sets the build's parallelism (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
which=${1:-all}
build_only=0
[[ ${2:-} == --build-only ]] && build_only=1
jobs=${GANTRY_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# The subset (CTest labels = test binaries) is what fits CI's time on 2 cores: the parts
# that take input from outside or run threads without the training engine, whose build
# (Eigen, oneDNN, MPI, the models) would double the time. Not covered here: the worker's
# data, optim, comm, train and serve tests (tensor, layers and models are numeric).
# ASan+UBSan: the common, spec, report and CLI libraries, the coordinator with its
# end-to-end tests (the real gantry-coordinator and gantry over loopback), and the fuzz
# corpus replays (IDX, .npy, checkpoints, run files, RunSpec <-> settings, packed image
# sets, PNG/JPEG/WebP decoding).
asan_tests=(common_tests runspec_tests report_tests cli_tests coordinator_tests fuzz)
asan_targets=(common_tests runspec_tests report_tests cli_tests coordinator_tests gantry gantry-coordinator
              fuzz_run_file_replay fuzz_run_spec_replay fuzz_idx_reader_replay fuzz_npy_replay
              fuzz_checkpoint_replay fuzz_flow_case_replay fuzz_job_record_replay fuzz_safetensors_replay
              fuzz_packed_images_replay fuzz_image_decode_replay)
# TSan: the coordinator (its service with long polls, leases and the job store, and end
# to end over loopback), the most threaded part that needs no engine, and the
# communicator tests (the thread-rank LocalCommunicator: all-reduce, bf16 all-reduce,
# broadcast, gather, barrier, a rank that never arrives; MpiCommunicator's arrival
# bookkeeping), which need only the tensor library. Not here: the pool's pool_tests,
# which link the whole engine (a second full TSan build, ~15 min on 2 cores); they were
# run under TSan by hand with no report (see docs/testing.md), their training tests
# (TrainObserver) excepted, which run a real model 50x slower under TSan.
tsan_tests=(coordinator_tests comm_tests)
tsan_targets=(coordinator_tests comm_tests gantry gantry-coordinator)

# Configures and builds `dir` with sanitizer `sanitizer`, building the targets that follow.
build() {
  local dir=$1 sanitizer=$2
  shift 2
  # -O0 with line tables only (-g1): reports keep file:line stacks, and the instrumented
  # build takes half the time or less of one at -O1 (the sanitizers' advice, for the
  # tests' speed; these tests wait on sockets and processes more than they compute): on 2
  # cores the ASan stage took 548 s in all, against more than 1,000 s, still building, at
  # -O1 in batches of 8 (2026-12-01). Batches of 16 sources: fewer parses of the gRPC headers.
  local generator=()  # Ninja for a new folder, as scripts/build.sh says why
  if [[ ! -e ${dir}/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "${dir}" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
    -DGANTRY_SANITIZER="${sanitizer}" -DGANTRY_WORKER=ON \
    -DGANTRY_CUDA=OFF -DGANTRY_BUILD_BENCHMARKS=OFF -DGANTRY_UNITY_BUILD=ON -DGANTRY_UNITY_BATCH=16 \
    "${launcher[@]}" >/dev/null || return 1
  nice -n 5 cmake --build "${dir}" -j"${jobs}" --target "$@"
}

# The CTest label expression that selects the tests of these binaries.
labels() {
  local IFS='|'
  echo "^($*)\$"
}

# Fails when any sanitizer report was written under `dir`/sanitizer-reports.
check_reports() {
  local dir=$1 reports
  reports=$(find "${dir}/sanitizer-reports" -type f -size +0 2>/dev/null || true)
  if [[ -n ${reports} ]]; then
    echo "sanitizers: reports in ${dir}/sanitizer-reports:" >&2
    for r in ${reports}; do
      echo "==== ${r}" >&2
      head -80 "${r}" >&2
    done
    return 1
  fi
  echo "sanitizers: ${dir}: no reports"
}

run_asan() {
  local dir=build-asan
  build "${dir}" address,undefined "${asan_targets[@]}" || return 1
  ((build_only)) && return 0
  local reports=${root}/${dir}/sanitizer-reports
  rm -rf "${reports}" && mkdir -p "${reports}"
  local status=0
  ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:log_path=${reports}/asan:log_exe_name=1" \
  LSAN_OPTIONS="suppressions=${root}/tests/sanitizers/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=${reports}/ubsan:log_exe_name=1" \
    ctest --test-dir "${dir}" --output-on-failure --no-tests=error -j2 --timeout 900 -L "$(labels "${asan_tests[@]}")" || status=1
  check_reports "${dir}" || status=1
  return ${status}
}

run_tsan() {
  local dir=build-tsan
  build "${dir}" thread "${tsan_targets[@]}" || return 1
  ((build_only)) && return 0
  local reports=${root}/${dir}/sanitizer-reports
  rm -rf "${reports}" && mkdir -p "${reports}"
  local status=0
  GANTRY_TEST_SLOWDOWN=5 TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=${reports}/tsan:log_exe_name=1:suppressions=${root}/tests/sanitizers/tsan.supp" \
    ctest --test-dir "${dir}" --output-on-failure --no-tests=error -j2 --timeout 900 -L "$(labels "${tsan_tests[@]}")" || status=1
  check_reports "${dir}" || status=1
  return ${status}
}

start=$(date +%s)
status=0
case ${which} in
  asan) run_asan || status=1 ;;
  tsan) run_tsan || status=1 ;;
  all) run_asan || status=1; run_tsan || status=1 ;;
  *) echo "usage: $0 [asan|tsan|all] [--build-only]" >&2; exit 2 ;;
esac
if ((build_only)); then
  echo "sanitizers: ${which}: build $([[ ${status} == 0 ]] && echo done || echo FAILED) in $(($(date +%s) - start)) s"
else
  echo "sanitizers: ${which} took $(($(date +%s) - start)) s, $([[ ${status} == 0 ]] && echo clean || echo FAILED)"
fi
exit ${status}
