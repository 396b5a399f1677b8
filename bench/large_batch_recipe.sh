#!/usr/bin/env bash
# Large batches that still learn: one sweep over global batch 64/128/256/512 per
# learning-rate rule, on 2 ranks, each scored every epoch by the dataset's judge, and a
# table of the samples each batch size needed to reach TARGET (the Fréchet distance batch
# 64 reaches under the baseline rule at epoch TARGET_EPOCH, measured first), from the
# runs' timing.md ("Time to target"). docs/large-batches.md holds its output.
#
#   bench/large_batch_recipe.sh                       # Fashion-MNIST, fp32, the rules below
#   DATASET=mnist DATA_DIR=~/data/mnist PRECISION=bf16 bench/large_batch_recipe.sh
#   RULES="none linear:20" IMAGES=6400 EPOCHS=3 bench/large_batch_recipe.sh
#   BATCHES=256,512 RULES="linear:20 none" BASELINE_RULE=none bench/large_batch_recipe.sh
#
# A rule is SCALING[:WARMUP_STEPS[:LR]] (--lr-scaling, --warmup-steps, --lr; LR default
# 1e-4, the rate tuned at batch 64). OUT (default /tmp/gantry-large-batch) collects the
# runs; an existing run folder is reused, not trained again. Needs build/bin/gantry-worker
# and mpirun. The samples columns do not depend on the machine's speed or load; the
# seconds do.
set -euo pipefail
cd "$(dirname "$0")/.."
DATASET=${DATASET:-fashion-mnist}
DATA_DIR=${DATA_DIR:-}
PRECISION=${PRECISION:-fp32}
RULES=${RULES:-"none linear:0 linear:20 sqrt:20"}
BATCHES=${BATCHES:-64,128,256,512}  # of each rule's sweep; batch 64 alone is the baseline
IMAGES=${IMAGES:-12800}
EPOCHS=${EPOCHS:-4}
TARGET_EPOCH=${TARGET_EPOCH:-2}
RANKS=${RANKS:-2}
OUT=${OUT:-/tmp/gantry-large-batch}
worker=build/bin/gantry-worker
[[ -x $worker ]] || { echo "large_batch_recipe: build first (scripts/build.sh): no $worker" >&2; exit 2; }
data_flags=(--dataset "$DATASET")
[[ -n $DATA_DIR ]] && data_flags+=(--data-dir "$DATA_DIR")
mkdir -p "$OUT"

"$worker" train-judge "${data_flags[@]}" | tail -1

# run NAME TARGET RULE: one sweep (skipped when OUT/NAME finished before).
run() {
  local name=$1 target=$2 scaling lr warmup
  IFS=: read -r scaling warmup lr <<<"$3"
  local dir=$OUT/$name
  [[ -f $dir/timing.md ]] && return 0
  rm -rf "$dir"
  local flags=("${data_flags[@]}" --precision "$PRECISION" --batch-size "$BATCHES" --epochs "$EPOCHS"
               --limit-images "$IMAGES" --quality full --lr "${lr:-1e-4}" --lr-scaling "$scaling"
               --warmup-steps "${warmup:-0}" --out "$dir")
  [[ $target != 0 ]] && flags+=(--target-fd "$target")
  echo "large_batch_recipe: $name: ${flags[*]}" >&2
  mpirun --allow-run-as-root --oversubscribe -np "$RANKS" "$worker" train "${flags[@]}" > "$OUT/$name.log" 2>&1 ||
    { echo "large_batch_recipe: $name failed; see $OUT/$name.log" >&2; exit 1; }
}

# The target: batch 64's distance at TARGET_EPOCH under the first rule (a baseline run of
# batch 64 alone).
first_rule=${BASELINE_RULE:-${RULES%% *}}  # BASELINE_RULE: the rule of the batch-64 baseline (default: the first)
BATCHES=64 run "baseline-$DATASET-$PRECISION" 0 "$first_rule"  # BATCHES=64 for this call only
target=$(awk -F, -v e="$TARGET_EPOCH" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "quality_fd") c = i; next }
                                       $2 == e { print $c }' "$OUT/baseline-$DATASET-$PRECISION/epochs.csv")
[[ -n $target ]] || { echo "large_batch_recipe: the baseline has no score at epoch $TARGET_EPOCH" >&2; exit 1; }
# Batch 64's samples to the target: TARGET_EPOCH epochs of whole batches of 64 (the target
# is its own score there; "at most" when an earlier epoch already scored as well).
base_samples=$(( TARGET_EPOCH * (IMAGES / 64) * 64 ))
echo "## $DATASET, $PRECISION, $RANKS ranks: target FD $target (batch 64, rule '$first_rule', at epoch $TARGET_EPOCH: $base_samples samples)"
echo
echo "| rule | global batch | reached | samples to target | vs batch 64 | best FD | final FD |"
echo "|---|---:|:---|---:|---:|---:|---:|"
for rule in $RULES; do
  name="$DATASET-$PRECISION-${rule//:/-}"
  run "$name" "$target" "$rule"
  # The "Time to target" rows of timing.md, and each batch size's last score from epochs.csv.
  awk '/^## Time to target/ { on = 1; next } on && /^\| [0-9]/' "$OUT/$name/timing.md" |
    awk -F'|' -v rule="$rule" '{ gsub(/ /, "", $2); gsub(/ /, "", $5); print rule "|" $2 "|" $3 "|" $5 "|" $8 }' |
    while IFS='|' read -r r batch reached samples best; do
      final=$(awk -F, -v b="$batch" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "quality_fd") c = i; next }
                                     $1 == b { f = $c } END { print f }' "$OUT/$name/epochs.csv")
      ratio=-
      [[ $samples =~ ^[0-9]+$ ]] && ratio=$(awk -v s="$samples" -v b="$base_samples" 'BEGIN { printf "%.2fx", s / b }')
      echo "| $r | $batch |$reached| $samples | $ratio |$best| $final |"
    done
done
