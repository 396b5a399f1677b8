#!/usr/bin/env bash
# The flow workload end to end on the real binary: make-flow writes two small cases,
# train --model pix2pix --dataset flow trains a few steps on their crops (held-out
# columns and input | prediction | truth samples), and rollout under mpirun -np 2
# feeds the predictions back over tiles spread across both ranks. Refusals exit 2.
# Usage: flow_e2e.sh MPIEXEC GANTRY_WORKER
set -euo pipefail
mpiexec=$1
worker=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/../testing/num_check.sh"

for seed in 1 2; do
  "$worker" make-flow --out "$dir/data/case-$seed" --nx 96 --ny 48 --re 100 --frames 30 --seed "$seed" \
    > "$dir/make-$seed.log" 2>&1 || { cat "$dir/make-$seed.log"; fail "make-flow case $seed"; }
done

"$worker" train --model pix2pix --dataset flow --data-dir "$dir/data" --image-size 32 --ngf 8 --ndf 8 \
  --batch-size 8 --epochs 1 --max-steps 3 --out "$dir/run" > "$dir/train.log" 2>&1 \
  || { cat "$dir/train.log"; fail "train"; }
head -1 "$dir/run/epochs.csv" | grep -q ',val_l1,val_rel_l2,' || fail "epochs.csv has no validation columns"
# Columns by name: later columns may follow them.
column() { awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i } END { print $c }' "$dir/run/epochs.csv"; }
val=$(column val_rel_l2)
num_check 'v > 0' v="$val" || fail "val_rel_l2 is $val"
still=$(column val_persistence_rel_l2)
num_check 'v > 0' v="$still" || fail "val_persistence_rel_l2 is $still"
ls "$dir/run/samples/"*.png > /dev/null || fail "no samples"
grep -q "held-out next frame" "$dir/run/log.txt" || fail "no validation line in the log"

# Time to quality on the flow workload: the held-out relative L2 is the score
# --target-rel-l2 follows. A target every epoch meets (any error is <= 1e6) ends the run
# at its first epoch under --stop-at-target and is reported as reached by then; one no
# epoch meets says "never" with the best score.
flow_train=(train --model pix2pix --dataset flow --data-dir "$dir/data" --image-size 32 --ngf 8 --ndf 8
            --batch-size 8 --limit-images 16 --epochs 2)
"$worker" "${flow_train[@]}" --target-rel-l2 1e6 --stop-at-target --out "$dir/met" > "$dir/met.log" 2>&1 \
  || { cat "$dir/met.log"; fail "train with --target-rel-l2 1e6"; }
grep -q "## Time to target (held-out relative L2 <= 1e+06" "$dir/met/timing.md" || fail "timing.md has no time to target"
grep -q "| 8 | epoch 1 (by) | " "$dir/met/timing.md" || fail "the met target is not at epoch 1: $(cat "$dir/met/timing.md")"
grep -q "reached the quality target; --stop-at-target ends this batch size" "$dir/met/log.txt" || fail "no early stop"
[ "$(tail -n +2 "$dir/met/epochs.csv" | wc -l)" -eq 1 ] || fail "--stop-at-target did not end the run at epoch 1"
"$worker" "${flow_train[@]}" --target-rel-l2 1e-9 --out "$dir/missed" > "$dir/missed.log" 2>&1 \
  || { cat "$dir/missed.log"; fail "train with --target-rel-l2 1e-9"; }
grep -q "| 8 | never (2 scored epochs) | " "$dir/missed/timing.md" || fail "the missed target is not 'never'"

"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" rollout --run "$dir/run" --case "$dir/data/case-2" \
  --steps 6 --overlap 8 --blend gaussian --out "$dir/roll" > "$dir/roll.log" 2>&1 \
  || { cat "$dir/roll.log"; fail "rollout under mpirun"; }
[ "$(wc -l < "$dir/roll/rollout.csv")" -eq 7 ] || fail "rollout.csv has not 6 steps"
grep -q "tiles/s over 2 rank(s)" "$dir/roll/rollout.md" || fail "rollout.md lacks the tiling line"
[ -s "$dir/roll/strip.png" ] || fail "no strip.png"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["steps"] == 6 and "first_below" in j and "blow_up" in j, j' \
  "$dir/roll/rollout.json" || fail "rollout.json lacks the marks"
[ -s "$dir/roll/errors.png" ] || fail "no errors.png"

# One rank gives the same numbers as two.
"$worker" rollout --run "$dir/run" --case "$dir/data/case-2" --steps 6 --overlap 8 --out "$dir/roll1" \
  > "$dir/roll1.log" 2>&1 || { cat "$dir/roll1.log"; fail "rollout on one rank"; }
cmp -s "$dir/roll/rollout.csv" "$dir/roll1/rollout.csv" || fail "1 rank and 2 ranks differ: $(diff "$dir/roll/rollout.csv" "$dir/roll1/rollout.csv")"

# Unrolled training under mpirun -np 2 (--unroll 3 with a curriculum of one epoch per
# added step: epochs 1, 2, 3 unroll 1, 2, 3 steps): rank 0 killed in epoch 3 and the run
# resumed ends in the state and epoch rows of the run never interrupted; the unrolled
# model rolls out and generates like any next-frame model.
mpi() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" "$@"; }
state_crc() { "$worker" inspect-checkpoint "$1" | grep '"state_crc32"'; }
rows_without_timing() { cut -d, -f1,2,6,7,8,12,16-19 "$1/epochs.csv"; }
small=(train --model pix2pix --dataset flow --data-dir "$dir/data" --image-size 32 --ngf 8 --ndf 8
       --batch-size 8 --limit-images 32 --epochs 3 --checkpoint-every-steps 3)
unrolled=("${small[@]}" --unroll 3 --unroll-curriculum 1)
mpi "${unrolled[@]}" --out "$dir/unrolled" > "$dir/unrolled.log" 2>&1 || { cat "$dir/unrolled.log"; fail "unrolled train"; }
grep -q "unrolled training: windows of 4 frames (3 steps of --horizon 1), loss on every step, from 1 step adding one every 1 epoch" \
  "$dir/unrolled/log.txt" || fail "the log does not describe the unrolled training"
python3 -c 'import json, sys
u = json.load(open(sys.argv[1]))["config"]["pix2pix"]["unroll"]
sys.exit(u != {"steps": 3, "loss": "every", "pushforward": False, "curriculum_epochs": 1})' "$dir/unrolled/run.json" \
  || fail "run.json does not record --unroll: $(cat "$dir/unrolled/run.json")"
mpi "${unrolled[@]}" --out "$dir/crashed" --debug-crash-after-step 9 > "$dir/crashed.log" 2>&1 \
  && fail "mpirun exited 0 although rank 0 was killed"
mpi train --resume "$dir/crashed" > "$dir/resumed.log" 2>&1 || { cat "$dir/resumed.log"; fail "resume the unrolled run"; }
grep -qE "resuming at batch 8 epoch 3 step 1/4" "$dir/resumed.log" || fail "did not resume in epoch 3: $(grep resum "$dir/resumed.log")"
[[ $(state_crc "$dir/crashed") == "$(state_crc "$dir/unrolled")" ]] \
  || fail "the resumed unrolled run's state differs from the uninterrupted run's"
[[ $(rows_without_timing "$dir/crashed") == "$(rows_without_timing "$dir/unrolled")" ]] \
  || fail "the resumed unrolled run's epochs.csv differs from the uninterrupted run's"
mpi "${unrolled[@]}" --pushforward --unroll-loss last --max-steps 2 --out "$dir/pushforward" > "$dir/pf.log" 2>&1 \
  || { cat "$dir/pf.log"; fail "train with --pushforward"; }
# The overlapped exchange hears of G's gradients in its last backward pass only (the
# first step's): the same state as the exchange after backward.
for overlap in on off; do
  mpi "${small[@]}" --unroll 3 --max-steps 3 --overlap "$overlap" --out "$dir/overlap-$overlap" \
    > "$dir/overlap-$overlap.log" 2>&1 || { cat "$dir/overlap-$overlap.log"; fail "unrolled train --overlap $overlap"; }
done
[[ $(state_crc "$dir/overlap-on") == "$(state_crc "$dir/overlap-off")" ]] \
  || fail "unrolled training with the overlapped exchange differs from the exchange after backward"
"$worker" rollout --run "$dir/unrolled" --case "$dir/data/case-2" --steps 3 --out "$dir/roll-unrolled" \
  > "$dir/roll-unrolled.log" 2>&1 || { cat "$dir/roll-unrolled.log"; fail "rollout of the unrolled run"; }
"$worker" generate --run "$dir/unrolled" --case "$dir/data/case-2" --out "$dir/gen-unrolled" \
  > "$dir/gen-unrolled.log" 2>&1 || { cat "$dir/gen-unrolled.log"; fail "generate from the unrolled run"; }
# Windows longer than a case: refused naming the case and the fix (exit 2, nothing trained).
set +e
"$worker" train --model pix2pix --dataset flow --data-dir "$dir/data" --image-size 32 --unroll 40 \
  --out "$dir/too-long" > "$dir/too-long.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--unroll 40 on 30 frames exited $rc, not 2"
grep -q -- "--unroll 40 at --horizon 1 needs windows of 41 frames" "$dir/too-long.log" \
  || fail "the refusal does not name the window: $(cat "$dir/too-long.log")"
[ ! -e "$dir/too-long/checkpoints" ] || fail "a refused run wrote checkpoints"

set +e
"$worker" rollout --run "$dir/run" --case "$dir/data/case-2" --steps 2 --tile 64 > "$dir/bad.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a tile other than the image size exited $rc, not 2"
grep -q -- "--tile 32" "$dir/bad.log" || fail "the refusal does not name the fix: $(cat "$dir/bad.log")"
echo "PASS"
