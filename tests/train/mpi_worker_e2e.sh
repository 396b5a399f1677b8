#!/usr/bin/env bash
# End-to-end gantry-worker runs under `mpirun -np 2` on a slice of Fashion-MNIST (the
# Debian package scripts/install_deps.sh installs). Usage:
#   mpi_worker_e2e.sh MPIEXEC WORKER SCENARIO      SCENARIO: sweep | straggler | stuck
# Exit 0: pass; 77: skipped (no dataset); anything else: fail, with the reason.
set -uo pipefail
mpiexec=$1 worker=$2 scenario=$3
data=/usr/share/datasets/fashion-mnist
[[ -e $data/train-images-idx3-ubyte.gz || -e $data/train-images-idx3-ubyte ]] || { echo "SKIP: no $data"; exit 77; }
out=$(mktemp -d)/run
log=$(mktemp)
fail() { echo "FAIL ($scenario): $*"; echo "--- output:"; cat "$log"; exit 1; }
run() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" train --data-dir "$data" --out "$out" \
          --progress-seconds 1 "$@" >"$log" 2>&1; }

case $scenario in
  sweep)
    run --limit-images 512 --batch-size 32,64 --epochs 2 --sync-bn || fail "exit code $?"
    grep -q "(2 ranks)" "$out/timing.md" || fail "timing.md does not say 2 ranks"
    grep -q "^| 64 | 2 |" "$out/timing.md" || fail "timing.md lacks the batch 64 summary"
    [[ $(grep -cE ",2,[0-9.]+,[0-9.]+,[0-9]+$" "$out/epochs.csv") == 4 ]] \
      || fail "epochs.csv should have 4 rows with world_size 2"
    [[ -s $out/samples/b0064/epoch_002.png ]] || fail "no samples for batch 64"
    grep -q '"world_size": 2' "$out/run.json" || fail "run.json lacks world_size 2"
    ;;
  straggler)
    # Rank 1 takes 3x its compute time: flagged within a 5-step window, and the shares
    # move towards rank 0 at the epoch boundary.
    run --limit-images 1280 --batch-size 64 --epochs 2 --debug-slow-rank 1 --debug-slow-factor 3 \
        --straggler-window 5 --rebalance || fail "exit code $?"
    grep -q "straggler: rank 1" "$log" || fail "no straggler log line for rank 1"
    grep -qE "^64,1,[0-9]+,1," "$out/stragglers.csv" || fail "stragglers.csv has no row for rank 1"
    grep -qE "rebalancing global batch 64: shares 32/32 -> " "$log" || fail "shares were not rebalanced"
    ;;
  stuck)
    # Rank 1 stalls 60 s inside a step; rank 0 must give up after the 2 s timeout, name
    # rank 1 and take the job down.
    start=$(date +%s)
    run --limit-images 256 --batch-size 32 --epochs 1 --debug-slow-rank 1 --debug-slow-ms 60000 --comm-timeout 2
    code=$?
    elapsed=$(( $(date +%s) - start ))
    (( code != 0 )) || fail "mpirun exited 0 although rank 1 was stuck"
    grep -q "rank 1 did not arrive" "$log" || fail "the error does not name rank 1"
    (( elapsed < 40 )) || fail "took ${elapsed}s to give up"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
echo "PASS ($scenario)"
