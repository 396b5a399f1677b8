#!/usr/bin/env bash
# End-to-end gantry-worker runs under `mpirun -np 2` on a slice of Fashion-MNIST (the
# Debian package scripts/install_deps.sh installs). Usage:
#   mpi_worker_e2e.sh MPIEXEC WORKER SCENARIO      SCENARIO: sweep | straggler | stuck | overflow | resume
# Exit 0: pass; anything else: fail, with the reason (a missing dataset included).
set -uo pipefail
mpiexec=$1 worker=$2 scenario=$3
data=/usr/share/datasets/fashion-mnist
[[ -e $data/train-images-idx3-ubyte.gz || -e $data/train-images-idx3-ubyte ]] \
  || { echo "FAIL: no $data (bash scripts/install_deps.sh installs dataset-fashion-mnist)"; exit 1; }
out=$(mktemp -d)/run
log=$(mktemp)
fail() { echo "FAIL ($scenario): $*"; echo "--- output:"; cat "$log"; exit 1; }
source "$(dirname "$0")/../testing/num_check.sh"
# The value of column NAME in row ROW (1 = first data row) of epochs.csv.
column() { awk -F, -v name="$1" -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
                                            NR == row + 1 { print $c }' "$out/epochs.csv"; }
run() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" train --data-dir "$data" --out "$out" \
          --progress-seconds 1 "$@" >"$log" 2>&1; }
# epochs.csv of run folder $1 without its timing columns (seconds, step times, data wait,
# all-reduce time and share, straggler flags, peak RSS).
rows_without_timing() { cut -d, -f1,2,6,7,8,12,16-19 "$1/epochs.csv"; }
state_crc() { "$worker" inspect-checkpoint "$1" | grep '"state_crc32"'; }

case $scenario in
  sweep)
    run --limit-images 512 --batch-size 32,64 --epochs 2 --sync-bn || fail "exit code $?"
    grep -q "(2 ranks, fp32)" "$out/timing.md" || fail "timing.md does not say 2 ranks, fp32"
    grep -q "^| 64 | 2 |" "$out/timing.md" || fail "timing.md lacks the batch 64 summary"
    [[ $(tail -n +2 "$out/epochs.csv" | wc -l) == 4 ]] || fail "epochs.csv should have 4 rows"
    for row in 1 2 3 4; do
      [[ $(column world_size $row) == 2 ]] || fail "epochs.csv row $row: world_size is not 2"
      [[ $(column loss_scale_g $row) == 1 && $(column skipped_steps_d $row) == 0 ]] \
        || fail "epochs.csv row $row: an fp32 run has no loss scaling and skips nothing"
      num_check 'd > 0 and d < 100 and g > 0 and g < 100' d="$(column d_loss $row)" g="$(column g_loss $row)" \
        || fail "epochs.csv row $row: losses are not finite and positive"
    done
    [[ -s $out/samples/b0064/epoch_002.png ]] || fail "no samples for batch 64"
    grep -q '"world_size": 2' "$out/run.json" || fail "run.json lacks world_size 2"
    # --overlap auto (the default) timed both exchanges and kept one, at each batch size.
    (( $(grep -cE -- "--overlap auto: (overlapped|after backward) \(median step [0-9.]+ ms overlapped, [0-9.]+ ms after backward, 6 steps of each, mean over 2 rank\(s\)\)" "$log") == 2 )) \
      || fail "expected one --overlap auto decision per batch size in the log"
    ;;
  straggler)
    # Rank 1 takes 3x its compute time: flagged within a 5-step window (an epoch is 10
    # steps), and the shares move towards rank 0 at the epoch boundary.
    run --limit-images 640 --batch-size 64 --epochs 2 --debug-slow-rank 1 --debug-slow-factor 3 \
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
  overflow)
    # bf16 with dynamic loss scaling; rank 1 alone gets an inf in D's gradient at step 3:
    # both ranks skip D's step 3 (one skip, D's scale halved), G is untouched, training
    # goes on to the end, and the bf16 all-reduce keeps the replicas in step.
    run --limit-images 256 --batch-size 32 --epochs 1 --precision bf16 --debug-inject-inf-step 3 \
        --debug-inject-inf-rank 1 --debug-inject-inf-network d || fail "exit code $?"
    [[ $(column steps 1) == 8 ]] || fail "the epoch did not run all 8 steps"
    [[ $(column skipped_steps_d 1) == 1 && $(column skipped_steps_g 1) == 0 ]] || fail "expected skips G/D 0/1"
    [[ $(column loss_scale_d 1) == 32768 && $(column loss_scale_g 1) == 65536 ]] || fail "expected scales 65536/32768"
    num_check 'v > 10' v="$(column peak_rss_mb 1)" || fail "peak_rss_mb is not plausible"
    grep -q "step 3: D's gradient holds inf/NaN; D's step skipped on every rank, its loss scale now 32768" "$log" \
      || fail "no log line for the skipped step"
    grep -q '"allreduce_dtype": "bf16"' "$out/run.json" || fail "run.json lacks the bf16 all-reduce"
    grep -q "(2 ranks, bf16, dynamic loss scaling, bf16 all-reduce)" "$out/timing.md" || fail "timing.md title"
    ;;
  resume)
    # 128 images in global batches of 16: 8 steps per epoch, 2 epochs, a checkpoint every
    # 3 steps and at each epoch end (3, 6, 8, 9, 12, 15, 16). Rank 0 kills itself (SIGKILL)
    # right after step 13 of the run (mid epoch 2; --debug-crash-after-step: the point is
    # chosen, not raced), its newest checkpoint (12) is then damaged, and `--resume` must
    # fall back to the one before (9, mid epoch 2 too) and end bit-identical to a run that
    # was never interrupted. A linearly scaled rate warming up over 12 steps spans both
    # checkpoints: `--resume` takes the rule from run.json and continues the ramp.
    settings=(--limit-images 128 --batch-size 16 --epochs 2 --checkpoint-every-steps 3
              --lr-scaling linear --base-batch-size 8 --warmup-steps 12)
    final=$out
    out=$(dirname "$final")/reference
    run "${settings[@]}" || fail "the uninterrupted run: exit code $?"
    out=$final
    run "${settings[@]}" --debug-crash-after-step 13 && fail "mpirun exited 0 although rank 0 was killed"
    grep -q -- "--debug-crash-after-step 13: killing this process now" "$log" || fail "rank 0 did not stop at step 13"
    [[ -e $out/checkpoints/ckpt-12.bin ]] || fail "no mid-epoch checkpoint before the kill"
    [[ ! -e $out/checkpoints/ckpt-15.bin ]] || fail "the run went on past step 13"
    newest=$(ls "$out"/checkpoints/ckpt-*.bin | sort -t- -k2 -n | tail -1)
    printf '\xff' | dd of="$newest" bs=1 seek=4096 conv=notrunc status=none
    "$worker" inspect-checkpoint "$newest" >/dev/null 2>&1 && fail "inspect-checkpoint accepts a damaged file"
    "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" train --data-dir "$data" --resume "$out" \
        >"$log" 2>&1 || fail "resume: exit code $?"
    grep -q "checkpoint passed over: $newest: checksum mismatch" "$log" || fail "the damaged $newest was not reported"
    grep -qE "resuming at batch 16 epoch 2 step [1-7]/8" "$log" || fail "did not resume mid epoch 2"
    grep -q "learning rate at global batch 16: 0.0002 (linear scaling of 0.0001 from batch 8), warm-up over 12 steps" \
      "$log" || fail "the resumed run does not follow the recorded rate rule"
    [[ $(state_crc "$out") == "$(state_crc "$(dirname "$out")/reference")" ]] \
      || fail "final weights/optimizer/scaler state differ from the uninterrupted run"
    [[ $(rows_without_timing "$out") == "$(rows_without_timing "$(dirname "$out")/reference")" ]] \
      || fail "epochs.csv differs from the uninterrupted run's"
    [[ $(tail -n +2 "$out/epochs.csv" | wc -l) == 2 ]] || fail "epochs.csv should have 2 rows"
    cmp -s "$out/samples/epoch_002.npy" "$(dirname "$out")/reference/samples/epoch_002.npy" \
      || fail "epoch 2 samples differ from the uninterrupted run's"
    # One process is enough for these: --out with its recorded value is accepted, another
    # seed is not; a finished run is reported and left alone.
    "$worker" train --resume "$out" --out "$out" --seed 7 >"$log" 2>&1 && fail "--seed 7 was accepted with --resume"
    grep -q "; --seed 7 (the run's: not given (its default, 1)) would change them (allowed with --resume: --data-dir," \
      "$log" || fail "no message naming --seed with both values"
    "$worker" train --data-dir "$data" --resume "$out" >"$log" 2>&1 || fail "resuming a finished run: exit code $?"
    grep -q "already finished (2 epoch rows); nothing to train" "$log" || fail "a finished run was not reported"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
echo "PASS ($scenario)"
