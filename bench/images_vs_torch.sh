#!/usr/bin/env bash
# The image DCGAN's training throughput (--dataset images: examples/dcgan's network),
# gantry vs PyTorch, 2 ranks x 1 thread, side by side: gantry-bench-step --model
# image-dcgan under mpirun against bench/torch/dcgan_torch.py --model image-dcgan --ddp
# (DistributedDataParallel over gloo), both on synthetic images, global batch BATCH.
#
# For every image size the two run BACK TO BACK, alternating (gantry, torch, gantry, ...)
# ROUNDS times, so a shared machine's load hits both alike. One row per size: each
# side's samples/s (median over the rounds; the global batch over rank 0's median step
# wall time) and the ratio gantry/PyTorch as the median [min-max] of the per-round ratios.
#
#   bench/images_vs_torch.sh                          # 32, 64 and 128 px at batch 128, fp32
#   SIZES=64 BATCH=128 ROUNDS=5 bench/images_vs_torch.sh
#   PRECISION=bf16 bench/images_vs_torch.sh           # only where the CPU has bf16 units
#
# Needs build/bin/gantry-bench-step (cmake -DGANTRY_BUILD_BENCHMARKS=ON), mpirun and
# /usr/bin/python3 with python3-torch; PyTorch runs over Debian's OpenBLAS
# (bench/torch/fair_torch.sh; OB=DIR names another OpenBLAS folder).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"32 64 128"}
BATCH=${BATCH:-128}
CHANNELS=${CHANNELS:-3}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-2}
STEPS=${STEPS:-5}
PRECISION=${PRECISION:-fp32}
BIN=${BIN:-build/bin/gantry-bench-step}
PY=${PY:-/usr/bin/python3}

[[ -x $BIN ]] || { echo "no $BIN: build the target gantry-bench-step first" >&2; exit 2; }
source bench/vs_torch_lib.sh
find_openblas
check_precision "$PRECISION"

# samples/s of each side's data row (nothing when the run failed): gantry-bench-step's
# row is "batch ranks median_ms p90_ms cpu_ms allreduce_ms samples/s GFLOP/s",
# dcgan_torch.py's "batch steps median_ms p90_ms min_ms samples/s samples/s@med ...".
gantry_run() {  # size
  mpirun --allow-run-as-root -np 2 --bind-to none -x OMP_NUM_THREADS=1 "$BIN" --model image-dcgan \
    --image-size "$1" --channels "$CHANNELS" --batch-size "$BATCH" --warmup "$WARMUP" --steps "$STEPS" \
    --precision "$PRECISION" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF == 8 {v = $7} END {print v}'
}
torch_run() {  # size
  env -u OPENBLAS_CORETYPE LD_LIBRARY_PATH="$OB" OMP_NUM_THREADS=1 "$PY" bench/torch/dcgan_torch.py \
    --model image-dcgan --image-size "$1" --channels "$CHANNELS" --ddp --world-size 2 --threads 1 \
    --batch-size "$BATCH" --warmup "$WARMUP" --steps "$STEPS" --precision "$PRECISION" 2>/dev/null |
    awk '$1 ~ /^[0-9]+$/ && NF == 11 {v = $7} END {print v}'
}

echo "# image DCGAN, $CHANNELS channels, $PRECISION, global batch $BATCH, 2 ranks x 1 thread, $ROUNDS alternating rounds of $WARMUP+$STEPS steps"
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| px | gantry samples/s | PyTorch samples/s | gantry / PyTorch median [min-max] |"
echo "|---|---:|---:|---|"
for size in $SIZES; do
  g=() t=() r=()
  for ((k = 0; k < ROUNDS; ++k)); do
    gs=$(gantry_run "$size" || true)
    ts=$(torch_run "$size" || true)
    if [[ -z $gs || -z $ts ]]; then
      echo "| $size | ${gs:-failed} | ${ts:-failed} | |"
      continue 2
    fi
    g+=("$gs") t+=("$ts") r+=("$(ratio "$gs" "$ts")")
  done
  echo "| $size | $(med "${g[@]}") | $(med "${t[@]}") | $(spread "${r[@]}") |"
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
