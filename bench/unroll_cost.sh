#!/usr/bin/env bash
# What unrolled training (--unroll M) costs per sample: the next-frame model trained on
# make-flow cases under mpirun, one short run per setting, the settings' runs ROUNDS times
# in turn (so a shared machine's load hits all alike). One row per setting: the median
# steady step time (epochs.csv steady_step_ms), samples/s, the time per sample against
# M = 1, and rank 0's peak resident memory (peak_rss_mb) beside the memory estimate's
# activations per sample (the check that refuses a run that cannot fit).
#
#   bench/unroll_cost.sh                                   # M = 1 2 4 8, and 8 with --pushforward
#   SETTINGS="1 4 4pf" RANKS=2 BATCH=16 bench/unroll_cost.sh
#   DATA=data/flow/set bench/unroll_cost.sh                # your cases (default: two made here)
#
# A setting is M, or M followed by "pf" for --pushforward --unroll-loss last. Needs
# build/bin/gantry-worker and mpirun; the network is docs/flow.md's (32 px crops, ngf =
# ndf = 16, InstanceNorm).
set -euo pipefail
cd "$(dirname "$0")/.."
SETTINGS=${SETTINGS:-"1 2 4 8 8pf"}
RANKS=${RANKS:-2}
BATCH=${BATCH:-16}
STEPS=${STEPS:-30}
ROUNDS=${ROUNDS:-2}
WORKER=${WORKER:-build/bin/gantry-worker}
[[ -x $WORKER ]] || { echo "unroll_cost: $WORKER not built (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=${DATA:-}
if [[ -z $data ]]; then
  data=$work/data
  for seed in 1 2; do
    "$WORKER" make-flow --out "$data/case-$seed" --nx 192 --ny 96 --re 100 --frames 40 --seed "$seed" \
      > "$work/make-$seed.log" 2>&1 || { cat "$work/make-$seed.log"; exit 1; }
  done
fi

# run SETTING ROUND: one short run; prints "steady_step_ms peak_rss_mb".
run() {
  local setting=$1 round=$2 m=${1%pf} extra=()
  [[ $setting == *pf ]] && extra=(--pushforward --unroll-loss last)
  local out=$work/run-$setting-$round
  mpirun --allow-run-as-root --oversubscribe -np "$RANKS" "$WORKER" train --model pix2pix --dataset flow \
    --data-dir "$data" --image-size 32 --ngf 16 --ndf 16 --norm instance --batch-size "$BATCH" --epochs 1 \
    --max-steps "$STEPS" --quality off --unroll "$m" "${extra[@]}" --out "$out" > "$out.log" 2>&1 \
    || { cat "$out.log" >&2; exit 1; }
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i } NR == 2 { print $c["steady_step_ms"], $c["peak_rss_mb"] }' \
    "$out/epochs.csv"
}

# label SETTING: the flags it stands for.
label() { if [[ $1 == *pf ]]; then echo "--unroll ${1%pf} --pushforward"; else echo "--unroll $1"; fi; }

declare -A steps rss
for ((round = 1; round <= ROUNDS; ++round)); do
  for setting in $SETTINGS; do
    read -r ms mb < <(run "$setting" "$round")
    steps[$setting]+="$ms "
    rss[$setting]+="$mb "
    echo "round $round, $(label "$setting"): ${ms} ms/step, peak ${mb} MB" >&2
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "Unrolled training cost: pix2pix 32 px, ngf = ndf = 16, InstanceNorm, global batch $BATCH on $RANKS rank(s), $STEPS steps, median of $ROUNDS"
echo
echo "| setting | ms/step | samples/s | time per sample vs M = 1 | peak RSS (MB, rank 0) |"
echo "|---|---|---|---|---|"
base=""
for setting in $SETTINGS; do
  ms=$(median <<< "${steps[$setting]}")
  mb=$(median <<< "${rss[$setting]}")
  [[ -z $base ]] && base=$ms
  awk -v l="$(label "$setting")" -v ms="$ms" -v b="$BATCH" -v base="$base" -v mb="$mb" \
    'BEGIN { printf "| %s | %.1f | %.1f | %.2fx | %.0f |\n", l, ms, b * 1000 / ms, ms / base, mb }'
done
