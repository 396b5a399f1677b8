#!/usr/bin/env bash
# gantry on arm64, under emulation. Cross-builds gantry-worker and the unit-test binaries
# (scripts/build_arm64.sh), then on this x86-64 host, through qemu-aarch64 in user mode
# with the arm64 library root (-L; no binfmt needed):
#   1. the unit tests of the binaries in test_binaries, each binary as one process (two at a
#      time), not one process per TEST as ctest runs them natively: under emulation a process
#      start costs seconds (loading oneDNN, gRPC and the rest), which was most of this stage;
#   2. an arm64 pool (gantry-worker serve, 2 ranks under the host's mpirun, Open MPI 4.1 as
#      in the root) taking a 10-step DCGAN job from gantry-coordinator and training it: the
#      run folder must hold one epoch of 10 steps on 2 ranks with finite losses, run.json
#      and a sample grid, and the coordinator's report must equal its epochs.csv.
# What it proves is that the arm64 build compiles, links, and computes and communicates
# correctly; speed under emulation means nothing (docs/hardware.md, "arm64").
# --build-only: the cross build alone, no tests (scripts/test.sh builds it in the
# background while other stages run).
# Exit: 0 pass; 1 fail; 77 skipped (no cross tools, qemu, or Debian mirror), with the reason.
set -uo pipefail
cd "$(dirname "$0")/.."
build_only=0
case ${1:-} in
  --build-only) build_only=1 ;;
  "") ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

build=${GANTRY_ARM64_BUILD:-build-arm64}
export GANTRY_ARM64_ROOT=${GANTRY_ARM64_ROOT:-/var/cache/gantry/arm64-root}
# The emulated CPU (cmake/aarch64-linux-gnu.cmake says why not qemu's SVE default).
export GANTRY_ARM64_QEMU_CPU=${GANTRY_ARM64_QEMU_CPU:-neoverse-n1}
emulate=(qemu-aarch64 -cpu "$GANTRY_ARM64_QEMU_CPU" -L "$GANTRY_ARM64_ROOT")
# The unit tests whose results can depend on the architecture: the kernels and their
# PyTorch goldens (tensor, layers), byte order of files (data), atomics and memory order
# of the thread-rank collectives (comm). The pure-logic ones (common, runspec, report) run
# natively only; so do optim (scalar arithmetic) and models, whose numerics are the
# layers' and whose whole training step the pool run below exercises on arm64. Left out
# here too: the finite-difference check of the oneDNN layers (the same arithmetic as the
# golden checks that do run, and 90 s of CPU under emulation), and the CappedToAvx2 tests
# (x86 only; natively they run in their own ctest entries).
test_binaries=(tensor_tests layers_tests data_tests comm_tests)
gtest_filter='-CappedToAvx2.*:OnednnLayersTest.GradientsMatchFiniteDifferences'

fail() { echo "test_arm64: FAIL: $*"; exit 1; }

# The control plane comes from the host's build (GANTRY_HOST_BUILD, default build/) when it
# is there, else it is cross-built too and run through qemu.
host_build=${GANTRY_HOST_BUILD:-build}
host_plane=arm64 plane_targets=(gantry gantry-coordinator)
if [[ -x $host_build/bin/gantry-coordinator && -x $host_build/bin/gantry ]]; then host_plane=amd64 plane_targets=(); fi
bash scripts/build_arm64.sh gantry-worker "${plane_targets[@]}" "${test_binaries[@]}"
code=$?
((code == 77)) && exit 77  # skipped, the reason printed
((code == 0)) || fail "the arm64 build (above)"
((build_only)) && { echo "test_arm64: build done"; exit 0; }

work=$(mktemp -d)  # logs and run folders; removed when everything passed

# run_unit_binary NAME[:FILTER]: build/bin/NAME under qemu with that gtest filter (default
# $gtest_filter), its output in a $work/NAME.*.log of its own; prints one line, PASS or FAIL with the
# seconds it took and, on a failure, the log's failing tests.
run_unit_binary() {
  local name=${1%%:*} filter=$gtest_filter log t0=$SECONDS code
  [[ $1 == *:* ]] && filter=${1#*:}
  log=$(mktemp "$work/$name.XXXX.log")
  timeout 900 qemu-aarch64 -cpu "$GANTRY_ARM64_QEMU_CPU" -L "$GANTRY_ARM64_ROOT" "$build/bin/$name" \
    --gtest_brief=1 --gtest_filter="$filter" >"$log" 2>&1
  code=$?
  if ((code == 0)); then
    echo "test_arm64: PASS $name ${filter:0:60} ($((SECONDS - t0)) s)"
    return 0
  fi
  echo "test_arm64: FAIL $name $filter (exit $code after $((SECONDS - t0)) s; 124: past 900 s); from $log:"
  grep -E '^\[  FAILED  \]|Failure|error' "$log" | head -40
  tail -20 "$log"
  return 1
}
export -f run_unit_binary
export build work gtest_filter

# tensor_tests takes ten times the others under emulation (334 s of 355 in one process on
# 2026-12-01), most of it one test, the forced convolution routes (239 s): that test runs
# as a job of its own, first, beside the rest of tensor_tests (181 s) and the other
# binaries, so both cores stay busy.
forced_routes=OnednnConvTest.EveryForcedRoutePassesTheSuitesConvolutionRows
jobs=()
for binary in "${test_binaries[@]}"; do
  if [[ $binary == tensor_tests ]]; then
    jobs=("tensor_tests:$forced_routes" "tensor_tests:-CappedToAvx2.*:$forced_routes" "${jobs[@]}")
  else
    jobs+=("$binary")
  fi
done
echo "test_arm64: unit tests under qemu-aarch64, ${GANTRY_JOBS:-2} at a time: ${jobs[*]}"
printf '%s\n' "${jobs[@]}" \
  | xargs -P "${GANTRY_JOBS:-2}" -I{} bash -c 'run_unit_binary "$1"' run_unit_binary {} \
  || fail "unit tests under qemu-aarch64 (above)"

# The data: Debian's Fashion-MNIST (scripts/install_deps.sh installs it).
data=/usr/share/datasets/fashion-mnist dataset=fashion-mnist
[[ -e $data/train-images-idx3-ubyte.gz || -e $data/train-images-idx3-ubyte ]] \
  || fail "no Fashion-MNIST in $data for the training run (bash scripts/install_deps.sh installs it)"
command -v mpirun >/dev/null || fail "no mpirun on the host (openmpi-bin) for the training run"
# Open MPI's shared-memory transport copies large messages with process_vm_readv, which
# qemu-user does not emulate (ENOSYS): copy through the shared segment instead. (Over TCP
# a plain run passed, but a pool's all-reduce hung on both ranks.)
mpi_transport=(--mca btl self,vader --mca btl_vader_single_copy_mechanism none)
# The run folder $out: one epoch of 10 steps on 2 ranks with finite losses, run.json
# and a sample grid.
source "$(dirname "$0")/../tests/testing/num_check.sh"
column() { awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR == 2 { print $c }' \
             "$out/epochs.csv"; }
check_run_folder() {
  [[ $(tail -n +2 "$out/epochs.csv" | wc -l) == 1 ]] || fail "$out/epochs.csv should hold one epoch"
  [[ $(column steps) == 10 ]] || fail "$out: the epoch ran $(column steps) steps, not 10"
  [[ $(column world_size) == 2 ]] || fail "$out/epochs.csv says world_size $(column world_size), not 2"
  local loss
  for loss in d_loss g_loss; do  # finite and positive (BCE): NaN, inf or 0 mean broken arithmetic
    num_check 'v > 0 and v < 100' v="$(column $loss)" || fail "$out: $loss is $(column $loss)"
  done
  grep -q '"world_size": 2' "$out/run.json" || fail "$out/run.json lacks world_size 2"
  find "$out/samples" -name '*.png' 2>/dev/null | grep -q . || fail "no sample grid under $out/samples"
}

# An arm64 worker group joins a coordinator like any other, and trains: `gantry-worker
# serve` on 2 arm64 ranks (40 images in global batches of 4, 2 per rank: one epoch of 10
# steps; a step takes seconds under emulation) registers with gantry-coordinator (the host's amd64 build in
# GANTRY_HOST_BUILD, default build/, where it is there; else the arm64 one through qemu
# too), takes the job the gantry CLI submits, trains it and reports its epoch row back.
if [[ $host_plane == amd64 ]]; then
  coordinator=("$host_build/bin/gantry-coordinator") cli=("$host_build/bin/gantry") plane=amd64
else
  coordinator=("${emulate[@]}" "$build/bin/gantry-coordinator") cli=("${emulate[@]}" "$build/bin/gantry") plane=arm64
fi
pool=$work/pool
mkdir -p "$pool"
data_dir=$(realpath "$data")
echo "test_arm64: an arm64 pool of 2 ranks serving an $plane coordinator (logs: $pool)"
"${coordinator[@]}" --listen 127.0.0.1:0 --port-file "$pool/port" --db "$pool/gantry.db" \
  --data-root "$(dirname "$data_dir")" >"$pool/coordinator.log" 2>&1 &
coordinator_pid=$!
pool_pid=
stop() { kill "$coordinator_pid" ${pool_pid:+"$pool_pid"} 2>/dev/null; wait 2>/dev/null; }
trap stop EXIT
for _ in $(seq 100); do [[ -s $pool/port ]] && break; sleep 0.3; done
[[ -s $pool/port ]] || { cat "$pool/coordinator.log"; fail "gantry-coordinator did not start within 30 s"; }
export GANTRY_COORDINATOR=127.0.0.1:$(cat "$pool/port")
timeout 900 mpirun --allow-run-as-root --oversubscribe -np 2 "${mpi_transport[@]}" "${emulate[@]}" \
  "$build/bin/gantry-worker" serve --coordinator "$GANTRY_COORDINATOR" --runs-dir "$pool/runs" --name arm64-pool \
  --max-jobs 1 >"$pool/workers.log" 2>&1 &
pool_pid=$!
"${cli[@]}" submit --dataset "$dataset" --data-dir "$data_dir" --limit-images 40 --batch-size 4 --epochs 1 \
  --world-size 2 >"$pool/submit.log" 2>&1 || { cat "$pool/submit.log"; fail "gantry submit failed"; }
job=$(grep -o 'job-[0-9]*' "$pool/submit.log" | head -1)
timeout 900 "${cli[@]}" watch "$job" >"$pool/watch.log" 2>&1 &
watch_pid=$!
# A pool that ends before its job does (a rank died) fails the stage within seconds, not
# at the watch's timeout; after its one job (--max-jobs 1) it ends too, so the watch gets
# 10 s to see the final state.
pool_gone=
while kill -0 "$watch_pid" 2>/dev/null; do
  if [[ -z $pool_gone ]] && ! kill -0 "$pool_pid" 2>/dev/null; then pool_gone=$SECONDS; fi
  if [[ -n $pool_gone ]] && ((SECONDS - pool_gone > 10)); then
    kill "$watch_pid" 2>/dev/null
    tail -20 "$pool/workers.log"
    fail "the arm64 pool exited before $job ended (its log above; the coordinator's: $pool/coordinator.log)"
  fi
  sleep 1
done
wait "$watch_pid"
code=$?
((code == 0)) || { tail -20 "$pool/watch.log" "$pool/workers.log"; fail "gantry watch $job exited $code"; }
"${cli[@]}" groups >"$pool/groups.log" 2>&1
grep -q arm64-pool "$pool/groups.log" || { cat "$pool/groups.log"; fail "gantry groups does not list arm64-pool"; }
"${cli[@]}" report "$job" --csv >"$pool/report.csv" || fail "gantry report $job --csv failed"
cmp -s "$pool/report.csv" "$pool/runs/$job/epochs.csv" \
  || fail "the coordinator's report of $job differs from the arm64 pool's epochs.csv"
out=$pool/runs/$job
check_run_folder
wait "$pool_pid" || fail "the arm64 pool exited $? after its one job (--max-jobs 1)"
pool_pid=
echo "test_arm64: pool run: $job trained on arm64-pool, 10 steps, reported back to the $plane coordinator"
stop
trap - EXIT
rm -rf "$work"
echo "test_arm64: PASS"
