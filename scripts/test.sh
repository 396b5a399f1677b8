#!/usr/bin/env bash
# The test suite from a fresh Debian 12 machine; .ci/run calls exactly this.
#
#   bash scripts/test.sh           every stage below
#   bash scripts/test.sh --quick   deps, build and suite only (no control plane, arm64, sanitizers)
#
# Stages, in order (each timed; a summary line per stage at the end):
#   deps           scripts/install_deps.sh with everything the tests need (arm64 cross
#                  tools, Chromium for the dashboard test, PyTorch for the interop test)
#   build          build/ with the tests (scripts/build.sh --tests; ccache), torch_interop required
#   suite          ctest in build/: every test; only the GPU tests may skip
#   control-plane  build-control-plane/ (-DGANTRY_WORKER=OFF, what the coordinator's image
#                  builds) and its tests, so a worker dependency creeping in fails here
#   arm64          scripts/test_arm64.sh: the cross build and its tests under qemu
#   asan, tsan     scripts/sanitizers.sh asan|tsan: a test subset under ASan+UBSan and TSan
# The builds of the later stages (control plane, arm64, ASan, TSan) run in the background
# at idle priority (SCHED_IDLE, else nice 19), one after another once the build stage has
# passed (the arm64 library root, a download mostly, already while it runs): they take
# only the CPU the suite's tests leave unused (tests wait on processes, sockets and MPI
# start-up much of the time). A later stage first waits for its own background build
# (which then has the machine to itself), then runs its script as usual: the build step
# there finds nothing left to do, or, if the background build failed, redoes it and
# shows the error. Their log: build/prebuild.log.
# A stage that cannot run here (arm64 when the Debian mirror is unreachable) is reported
# SKIPPED with the reason, loudly, and does not fail the run; every other failure does,
# after the remaining stages have run. The current stage is written to
# build/test-stage (read by .ci/run's global timeout).
# GANTRY_ARM64=0 / GANTRY_SANITIZERS=0 leave those stages out (a local run; said in the summary).
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

summary=()
failed=0
started=$SECONDS
mkdir -p build

# run_stage NAME COMMAND...: runs it, timing it; 77 from COMMAND means SKIPPED.
run_stage() {
  local name=$1
  shift
  echo "$name" > build/test-stage
  echo "==== test.sh: stage $name: $*"
  local t0=$SECONDS status
  "$@"
  status=$?
  local took=$((SECONDS - t0))
  local line
  if ((status == 0)); then
    line=$(printf '%-14s PASS     %4d s' "$name" "$took")
  elif ((status == 77)); then
    line=$(printf '%-14s SKIPPED  %4d s  (the reason is printed above: look for "SKIPPED")' "$name" "$took")
    echo "!!!! test.sh: stage $name was SKIPPED: it proves nothing on this machine"
  else
    line=$(printf '%-14s FAIL     %4d s  (exit %d)' "$name" "$took" "$status")
    failed=1
  fi
  summary+=("$line")
  echo "==== test.sh: $line"
}

left_out() {  # left_out NAME WHY
  summary+=("$(printf '%-14s SKIPPED  %4s    (%s)' "$1" - "$2")")
}

# The background builds (see the header): one after another, each leaving
# build/prebuild/NAME (its exit status and seconds) when done.
prebuild_pid=
prebuild_names=()
prebuild_one() {  # prebuild_one NAME COMMAND...
  local name=$1 t0=$SECONDS status
  shift
  echo "==== prebuild $name: $*"
  "$@"
  status=$?
  echo "$status $((SECONDS - t0))" > "build/prebuild/$name"
  echo "==== prebuild $name: exit $status after $((SECONDS - t0)) s"
}
start_prebuilds() {
  ((${#prebuild_names[@]})) || return 0
  rm -rf build/prebuild && mkdir -p build/prebuild
  local idle=(nice -n 19)
  chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0 nice -n 19)
  set -m  # its own process group, killed as one when test.sh ends
  (
    # The arm64 library root (a download, mostly) while the main build compiles; the
    # builds once it has passed (build/prebuild/build holds its exit status).
    if [[ " ${prebuild_names[*]} " == *" arm64 "* ]]; then
      prebuild_one arm64-root "${idle[@]}" bash scripts/arm64_root.sh
    fi
    until [[ -e build/prebuild/build ]]; do sleep 2; done
    [[ $(cat build/prebuild/build) == 0 ]] || exit 0
    for name in "${prebuild_names[@]}"; do
      case $name in
        control-plane) prebuild_one "$name" "${idle[@]}" bash scripts/build.sh "${control_plane_build[@]}" ;;
        arm64) prebuild_one "$name" "${idle[@]}" bash scripts/test_arm64.sh --build-only ;;
        asan | tsan) prebuild_one "$name" "${idle[@]}" bash scripts/sanitizers.sh "$name" --build-only ;;
      esac
    done
  ) > build/prebuild.log 2>&1 < /dev/null &
  prebuild_pid=$!
  set +m
  echo "==== test.sh: building ${prebuild_names[*]} in the background at idle priority (log: build/prebuild.log)"
}
stop_prebuilds() {
  [[ -n $prebuild_pid ]] && kill -- -"$prebuild_pid" 2>/dev/null
  prebuild_pid=
}
trap stop_prebuilds EXIT
trap 'stop_prebuilds; exit 143' TERM INT
# await_prebuild NAME: returns when NAME's background build has ended (or there is none).
await_prebuild() {
  local name=$1 t0=$SECONDS
  [[ -n $prebuild_pid && " ${prebuild_names[*]} " == *" $name "* ]] || return 0
  [[ -e build/prebuild/$name ]] || echo "==== test.sh: waiting for the background build of $name"
  while [[ ! -e build/prebuild/$name ]] && kill -0 "$prebuild_pid" 2>/dev/null; do sleep 2; done
  echo "==== test.sh: background build of $name: $(prebuild_said "$name") (waited $((SECONDS - t0)) s)"
}
after_prebuild() {  # after_prebuild NAME COMMAND...: COMMAND once NAME's background build has ended
  await_prebuild "$1"
  shift
  "$@"
}
prebuild_said() {  # what build/prebuild/NAME says, in words
  local status seconds
  read -r status seconds < "build/prebuild/$1" 2>/dev/null || { echo "did not finish"; return; }
  case $status in
    0) echo "done in $seconds s" ;;
    77) echo "skipped after $seconds s" ;;
    *) echo "failed (exit $status) after $seconds s; the stage builds again and shows why" ;;
  esac
}

# The Noto emoji set the image tests pack (tests/train/images_e2e.sh emoji), from the npm
# registry, into the folder tests/CMakeLists.txt's GANTRY_EMOJI_DIR names by default.
emoji_dir=${GANTRY_EMOJI_DIR:-$HOME/data/emoji}
deps() {
  GANTRY_WITH_ARM64=$((quick ? 0 : ${GANTRY_ARM64:-1})) GANTRY_WITH_BROWSER=1 GANTRY_WITH_TORCH=1 \
    bash scripts/install_deps.sh && python3 scripts/emoji_images.py "$emoji_dir"
}

# The control plane's build (what the coordinator's image builds), here and in the background.
control_plane_build=(--tests --dir build-control-plane -DGANTRY_WORKER=OFF)
suite() { ctest --test-dir build --output-on-failure --no-tests=error -j2 --timeout 600; }

control_plane() {
  bash scripts/build.sh "${control_plane_build[@]}" \
    && ctest --test-dir build-control-plane --output-on-failure --no-tests=error -j2 --timeout 600
}

run_stage deps deps || true
if ((!quick)); then
  prebuild_names=(control-plane)
  [[ ${GANTRY_ARM64:-1} != 0 ]] && prebuild_names+=(arm64)
  [[ ${GANTRY_SANITIZERS:-1} != 0 ]] && prebuild_names+=(asan tsan)
  start_prebuilds
fi
run_stage build bash scripts/build.sh --tests -DGANTRY_REQUIRE_TORCH=ON "-DGANTRY_EMOJI_DIR=$emoji_dir"
if [[ ${summary[-1]} == *FAIL* ]]; then
  [[ -n $prebuild_pid ]] && echo 1 > build/prebuild/build
  left_out suite "the build failed"
else
  [[ -n $prebuild_pid ]] && echo 0 > build/prebuild/build
  run_stage suite suite
fi
if ((quick)); then
  left_out control-plane "--quick"
  left_out arm64 "--quick"
  left_out sanitizers "--quick"
else
  run_stage control-plane after_prebuild control-plane control_plane
  if [[ ${GANTRY_ARM64:-1} != 0 ]]; then
    run_stage arm64 after_prebuild arm64 bash scripts/test_arm64.sh
  else
    left_out arm64 "GANTRY_ARM64=0"
  fi
  if [[ ${GANTRY_SANITIZERS:-1} != 0 ]]; then
    run_stage asan after_prebuild asan bash scripts/sanitizers.sh asan
    run_stage tsan after_prebuild tsan bash scripts/sanitizers.sh tsan
  else
    left_out sanitizers "GANTRY_SANITIZERS=0"
  fi
fi

rm -f build/test-stage
echo
echo "==== test.sh summary ($((SECONDS - started)) s in all)"
printf '%s\n' "${summary[@]}"
for name in "${prebuild_names[@]}"; do
  printf '  background build of %s: %s\n' "$name" "$(prebuild_said "$name")"
done
if ((failed)); then
  echo "==== test.sh: FAILED"
  exit 1
fi
echo "==== test.sh: passed"
