#!/usr/bin/env bash
# The scaling study of docs/scaling.md: DCGAN (or Pix2Pix) on 2 ranks over shared memory and over two
# emulated hosts (scripts/emulated_hosts.sh, so run as root), each link with the fp32 and
# the bf16 wire and with the all-reduce overlapped (--overlap on) and after backward
# (off), interleaved in ROUNDS rounds so a drift of the machine's speed hits every
# configuration alike. Prints one line per run and a table of medians: epoch 2's steady
# step, samples/s, all-reduce and exposed all-reduce ms (epochs.csv), and the samples/s
# against the same batch and wire over shared memory with overlap off.
#
#   scripts/scaling_study.sh [OUT]     (default runs/scaling); env: ROUNDS (2), LINKS
#   ("shm none 1gbit"), WIRES ("fp32 bf16"), BATCHES ("64 256"), STEPS (steps per epoch, 30),
#   WORKER (build/bin/gantry-worker), MODEL (dcgan, or pix2pix: the flow workload's U-Net
#   at 32 px on a cylinder-wake case the script simulates into OUT/flow; 200 frames, rows
#   for batch 64 at 15 steps)
set -euo pipefail

out=${1:-runs/scaling}
rounds=${ROUNDS:-2}
links=${LINKS:-shm none 1gbit}
wires=${WIRES:-fp32 bf16}
batches=${BATCHES:-64 256}
steps=${STEPS:-30}
worker=${WORKER:-build/bin/gantry-worker}
model=${MODEL:-dcgan}
[[ $model == dcgan || $model == pix2pix ]] || { echo "scaling_study: MODEL must be dcgan or pix2pix, not '$model'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $worker ]] || { echo "scaling_study: no $worker (build first: bash scripts/build.sh)" >&2; exit 2; }
(( EUID == 0 )) || { echo "scaling_study: run as root (network namespaces)" >&2; exit 2; }
mkdir -p "$out"
results=$out/results.txt
: > "$results"
trap 'bash "$here/emulated_hosts.sh" down >/dev/null 2>&1 || true' EXIT
if [[ $model == pix2pix && ! -e $out/flow/frames.npy ]]; then
  "$worker" make-flow --out "$out/flow" --nx 128 --ny 64 --re 100 --frames 200 > "$out/flow.log" 2>&1 \
    || { echo "scaling_study: make-flow failed, see $out/flow.log" >&2; exit 1; }
fi

# STEPS steps per epoch at every batch size; epoch 2 is measured.
model_args() {
  [[ $model == dcgan ]] || echo "--model pix2pix --dataset flow --data-dir $out/flow --image-size 32"
}
train_args() {  # BATCH WIRE OVERLAP DIR
  echo "$(model_args) --limit-images $(( $1 * steps )) --batch-size $1 --epochs 2 --quality off --allreduce-dtype $2 --overlap $3 --out $4"
}

one_run() {  # LINK BATCH WIRE OVERLAP ROUND
  local dir=$out/r$5-$1-b$2-$3-$4
  rm -rf "$dir"
  # shellcheck disable=SC2046
  if [[ $1 == shm ]]; then
    timeout 600 mpirun --allow-run-as-root -np 2 --bind-to none "$worker" train $(train_args "$2" "$3" "$4" "$dir") \
      > "$dir.log" 2>&1
  else
    timeout 600 bash "$here/emulated_hosts.sh" run --keep -- "$worker" train $(train_args "$2" "$3" "$4" "$dir") \
      > "$dir.log" 2>&1
  fi || { echo "scaling_study: run failed, see $dir.log" >&2; exit 1; }
  # epoch 2: steady_step_ms ($4), samples_per_s ($5), allreduce_ms ($13), allreduce_exposed_ms (by name)
  awk -F, -v link="$1" -v b="$2" -v w="$3" -v o="$4" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "allreduce_exposed_ms") e = i}
    NR == 3 {printf "%s %s %s %s %s %s %s %s\n", link, b, w, o, $4, $5, $13, $e}' "$dir/epochs.csv" | tee -a "$results"
}

for round in $(seq 1 "$rounds"); do
  for link in $links; do
    [[ $link == shm ]] || bash "$here/emulated_hosts.sh" up 2 --rate "$link" > /dev/null
    for batch in $batches; do
      for wire in $wires; do
        for overlap in off on; do one_run "$link" "$batch" "$wire" "$overlap" "$round"; done
      done
    done
    [[ $link == shm ]] || bash "$here/emulated_hosts.sh" down > /dev/null
  done
done

echo
echo "| link | batch | wire | overlap | step ms | samples/s | all-reduce ms | exposed ms | vs shared memory, overlap off |"
echo "|---|---:|---|---|---:|---:|---:|---:|---:|"
PYTHONPATH="$here" python3 - "$results" <<'PY'
import sys
from scaling_results import medians
for batch in sorted({int(line.split()[1]) for line in open(sys.argv[1])}):
    med = medians(sys.argv[1], batch)
    for (link, wire, overlap), (step, sps, ar, exposed) in med.items():
        base = med.get(("shm", wire, "off"))
        ratio = "%.2f" % (sps / base[1]) if base else "-"
        print("| %s | %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %s |" % (link, batch, wire, overlap, step, sps, ar, exposed,
                                                                     ratio))
PY
