#!/usr/bin/env bash
# Large batches that still learn. First a baseline: global batch 64 alone, long enough to
# settle, scored every epoch by the dataset's judge. From it a target Fréchet distance
# (TARGET, below) and the samples batch 64 needed to first reach it. Then, per
# learning-rate rule, one sweep over BATCHES on RANKS ranks with --target-fd set to it,
# each batch size capped at CAP x batch 64's samples (and, with STOP=1, ended at the
# first epoch that reaches it); a table of the samples each needed, from the runs'
# timing.md ("Time to target"). SPEED=1 adds samples/s per batch size, measured in one
# sitting. docs/large-batches.md holds its output.
#
#   bench/large_batch_recipe.sh                       # Fashion-MNIST, fp32, the rules below
#   DATASET=mnist DATA_DIR=~/data/mnist PRECISION=bf16 bench/large_batch_recipe.sh
#   BATCHES=512 RULES="linear:20 linear:100+d-lr-ratio=4" bench/large_batch_recipe.sh
#   TARGET=epoch:2 BASE_EPOCHS=4 EPOCHS=4 RULES="linear:20 sqrt:20" bench/large_batch_recipe.sh  # the first page
#
# A rule is SCALING[:WARMUP_STEPS[:LR]] followed by any +SETTING=VALUE (--lr-scaling,
# --warmup-steps, --lr, then further train settings: +d-lr-ratio=4+beta2=0.99); LR
# defaults to 1e-4, the rate tuned at batch 64. BASELINE_RULE (default none:0) is the
# baseline's rule.
#
# TARGET says which distance the larger batches must reach:
#   hold:K   (default hold:3) the worst distance batch 64 scored over its last K epochs:
#            a level it holds from there on, not one lucky epoch
#   epoch:N  its distance after epoch N
#   a number that distance itself
# Batch 64's samples to the target are interpolated between its scored epochs as
# timing.md does (report/time_to_target.cc).
#
# OUT (default /tmp/gantry-large-batch) collects the runs; an existing finished run
# folder is reused, not trained again (a folder's name carries the data set, precision,
# images, batch sizes, epochs and rule; the target is not in it: changing TARGET or
# STOP needs a fresh OUT). Needs build/bin/gantry-worker
# and mpirun. The samples columns do not depend on the machine's speed or load; the
# seconds and samples/s do.
set -euo pipefail
cd "$(dirname "$0")/.."
DATASET=${DATASET:-fashion-mnist}
DATA_DIR=${DATA_DIR:-}
PRECISION=${PRECISION:-fp32}
RULES=${RULES:-"none linear:20 linear:100 sqrt:20"}
BASELINE_RULE=${BASELINE_RULE:-none:0}
BATCHES=${BATCHES:-128,256,512}  # of each rule's sweep; batch 64 alone is the baseline
IMAGES=${IMAGES:-12800}
BASE_EPOCHS=${BASE_EPOCHS:-6}
TARGET=${TARGET:-hold:3}
CAP=${CAP:-2}          # each sweep's epochs cover CAP x batch 64's samples to the target
EPOCHS=${EPOCHS:-}     # or this many epochs per batch size
STOP=${STOP:-1}        # 1: --stop-at-target
SPEED=${SPEED:-0}      # 1: also samples/s per batch size (64 and BATCHES), one epoch each
SPEED_IMAGES=${SPEED_IMAGES:-6144}
RANKS=${RANKS:-2}
OUT=${OUT:-/tmp/gantry-large-batch}
worker=build/bin/gantry-worker
[[ -x $worker ]] || { echo "large_batch_recipe: build first (scripts/build.sh): no $worker" >&2; exit 2; }
data_flags=(--dataset "$DATASET")
[[ -n $DATA_DIR ]] && data_flags+=(--data-dir "$DATA_DIR")
mkdir -p "$OUT"
tag=$DATASET-$PRECISION-i$IMAGES

"$worker" train-judge "${data_flags[@]}" | tail -1

# The column number of NAME in a CSV header line on stdin.
column_of() { head -1 | awk -F, -v n="$1" '{ for (i = 1; i <= NF; ++i) if ($i == n) print i }'; }

# fd_series CSV BATCH: the batch size's distances after each epoch, comma-separated.
fd_series() {
  local c; c=$(column_of quality_fd <"$1")
  awk -F, -v c="$c" -v b="$2" 'NR > 1 && $1 == b { printf "%s%.1f", (n++ ? ", " : ""), $c }' "$1"
}

# crossing CSV BATCH TARGET: "SAMPLES STEPS EPOCH BOUND" where the batch size's distance
# first reached TARGET, interpolated linearly between the scored epochs around it (BOUND
# "(by)": the first scored epoch met it, an upper bound), or "never". As
# report/time_to_target.cc computes it.
crossing() {
  local fd steps; fd=$(column_of quality_fd <"$1"); steps=$(column_of steps <"$1")
  awk -F, -v c="$fd" -v s="$steps" -v b="$2" -v t="$3" '
    NR == 1 || $1 != b { next }
    { at_samples += $s * b; at_steps += $s
      if ($c < 0) next
      if ($c <= t) {
        f = have ? (last - t) / (last - $c) : 1
        printf "%.0f %.0f %d %s\n", ls + f * (at_samples - ls), lt + f * (at_steps - lt), $2, have ? "-" : "(by)"
        found = 1; exit
      }
      last = $c; have = 1; ls = at_samples; lt = at_steps }
    END { if (!found) print "never" }' "$1"
}

# run NAME TARGET BATCHES EPOCHS RULE [FLAG...]: one sweep (skipped when OUT/NAME finished
# before).
run() {
  local name=$1 target=$2 batches=$3 epochs=$4 rule=$5; shift 5
  local base=${rule%%+*} scaling warmup lr
  IFS=: read -r scaling warmup lr <<<"$base"
  local dir=$OUT/$name
  [[ -f $dir/timing.md ]] && return 0
  rm -rf "$dir"
  local flags=("${data_flags[@]}" --precision "$PRECISION" --batch-size "$batches" --epochs "$epochs"
               --limit-images "$IMAGES" --lr "${lr:-1e-4}" --lr-scaling "$scaling" --warmup-steps "${warmup:-0}")
  local extra
  for extra in $(tr '+' ' ' <<<"${rule#"$base"}"); do flags+=("--${extra%%=*}" "${extra#*=}"); done
  flags+=("$@" --out "$dir")
  [[ $target != 0 ]] && flags+=(--target-fd "$target")
  echo "large_batch_recipe: $name: ${flags[*]}" >&2
  local t0=$SECONDS
  mpirun --allow-run-as-root --oversubscribe -np "$RANKS" "$worker" train "${flags[@]}" > "$OUT/$name.log" 2>&1 ||
    { echo "large_batch_recipe: $name failed; see $OUT/$name.log" >&2; exit 1; }
  echo "large_batch_recipe: $name: $((SECONDS - t0)) s" >&2
}

# The baseline and the target.
baseline=baseline-$tag-e$BASE_EPOCHS-${BASELINE_RULE//[:+=]/-}
run "$baseline" 0 64 "$BASE_EPOCHS" "$BASELINE_RULE" --quality full
csv=$OUT/$baseline/epochs.csv
fd_col=$(column_of quality_fd <"$csv")
case $TARGET in
  hold:*) target=$(awk -F, -v c="$fd_col" -v k="${TARGET#hold:}" -v e="$BASE_EPOCHS" \
                     'NR > 1 && $2 > e - k && (m == "" || $c > m) { m = $c } END { print m }' "$csv")
          how="the worst batch 64 scored over its last ${TARGET#hold:} of $BASE_EPOCHS epochs" ;;
  epoch:*) target=$(awk -F, -v c="$fd_col" -v e="${TARGET#epoch:}" 'NR > 1 && $2 == e { print $c }' "$csv")
           how="batch 64's after epoch ${TARGET#epoch:}" ;;
  *) target=$TARGET how="given" ;;
esac
[[ $target =~ ^[0-9.]+$ ]] || { echo "large_batch_recipe: no target from TARGET=$TARGET in $csv" >&2; exit 1; }
read -r base_samples base_steps base_epoch base_bound <<<"$(crossing "$csv" 64 "$target")"
[[ $base_samples != never ]] || { echo "large_batch_recipe: batch 64 never reached $target" >&2; exit 1; }
[[ $base_bound == - ]] && base_bound=
if [[ -z $EPOCHS ]]; then
  EPOCHS=$(awk -v s="$base_samples" -v c="$CAP" -v i="$IMAGES" 'BEGIN { e = c * s / i; print (e == int(e) ? e : int(e) + 1) }')
fi
stop=()
[[ $STOP == 1 ]] && stop=(--stop-at-target)

echo "## $DATASET, $PRECISION, $RANKS ranks, $IMAGES images an epoch"
echo
echo "Batch 64 (rule '$BASELINE_RULE', $BASE_EPOCHS epochs): FD $(fd_series "$csv" 64) after each epoch."
echo "Target: FD $target ($how); batch 64 first reached it after $base_samples samples $base_bound(epoch $base_epoch)."
echo "Every other batch size: at most $EPOCHS epochs ($((EPOCHS * IMAGES)) samples)${stop:+, ending at the first epoch that reaches the target}."
echo
echo "| rule | global batch | reached | samples to target | vs batch 64 | steps to target | best FD | FD after each epoch |"
echo "|---|---:|:---|---:|---:|---:|---:|---|"
for rule in $RULES; do
  name="$tag-b${BATCHES//,/-}-e$EPOCHS-${rule//[:+=]/-}"
  run "$name" "$target" "$BATCHES" "$EPOCHS" "$rule" --quality full "${stop[@]}"
  # The "Time to target" rows of timing.md.
  awk '/^## Time to target/ { on = 1; next } on && /^\| [0-9]/' "$OUT/$name/timing.md" |
    awk -F'|' '{ for (i = 2; i <= 8; ++i) gsub(/^ +| +$/, "", $i); print $2 "|" $3 "|" $5 "|" $6 "|" $8 }' |
    while IFS='|' read -r batch reached samples steps best; do
      ratio=-
      [[ $samples =~ ^[0-9]+$ ]] && ratio=$(awk -v s="$samples" -v b="$base_samples" 'BEGIN { printf "%.2fx", s / b }')
      echo "| \`$rule\` | $batch | $reached | $samples | $ratio | $steps | $best | $(fd_series "$OUT/$name/epochs.csv" "$batch") |"
    done
done

if [[ $SPEED == 1 ]]; then
  # Samples/s per batch size: one sweep, one epoch each, unscored, in one sitting.
  name=speed-$DATASET-$PRECISION-i$SPEED_IMAGES
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  IMAGES=$SPEED_IMAGES run "$name" 0 "64,$BATCHES" 1 none:0 --quality off
  echo
  echo "Samples/s per global batch ($name: one epoch of $SPEED_IMAGES images each, unscored; load average before: $load):"
  echo
  echo "| global batch | samples/s | all-reduce share |"
  echo "|---:|---:|---:|"
  awk -F'|' '/^\| global batch \| epochs/ { on = 1; next } on && /^\|---/ { next } on && /^\| [0-9]/ {
               for (i = 2; i <= 7; ++i) gsub(/^ +| +$/, "", $i); print "| " $2 " | " $6 " | " $7 " |"; next }
             on { exit }' "$OUT/$name/timing.md"
fi
