#!/usr/bin/env bash
# Pix2Pix training throughput, gantry vs PyTorch, 2 ranks x 1 thread, side by side.
#
# For every configuration and per-rank batch, the two run BACK TO BACK, alternating
# (gantry, torch, gantry, torch, ...) ROUNDS times, so a shared machine's load hits
# both alike. One table row per configuration and batch:
#   - samples/s of each side: the median over the rounds (global batch over rank 0's
#     median step wall time), and the ratio gantry/PyTorch as the median [min-max] of the
#     per-round ratios: the figure the target is stated in;
#   - "CPU ratio": PyTorch's CPU time per step over gantry's (rank 0's process CPU time,
#     median over the rounds). On a loaded machine wall time includes the slices other
#     processes took, CPU time mostly does not, so this column is the steadier of the
#     two there; on a quiet machine the two ratios agree.
# BEFORE=path/to/another/gantry-bench-pix2pix adds that binary to every round (gantry,
# before, torch, ...) and two more columns: its samples/s and its wall ratio to PyTorch,
# for a before/after comparison in the same sitting.
#
#   bench/pix2pix_vs_torch.sh                      # defaults below
#   CONFIGS="128:64:64 256:64:64" BATCHES="2 4 8" ROUNDS=3 bench/pix2pix_vs_torch.sh
#   BEFORE=/tmp/gantry-bench-pix2pix.main CONFIGS="128:64:64" BATCHES=4 bench/pix2pix_vs_torch.sh
#
# Needs build/bin/gantry-bench-pix2pix, mpirun and /usr/bin/python3 with python3-torch.
# PyTorch runs over Debian's OpenBLAS from bench/torch/fair_torch.sh (fetched into its cache
# on first use; bench/torch/README.md, "A fair PyTorch"); OB=DIR names another folder with
# OpenBLAS's libblas.so.3 instead.
# PRECISION=bf16 only where lscpu lists avx512_bf16 or amx_bf16 (checked here).
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIGS=${CONFIGS:-"128:64:64 256:64:64 128:16:16"}   # size:ngf:ndf
BATCHES=${BATCHES:-"1 2 4 8"}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1}
STEPS=${STEPS:-3}
PRECISION=${PRECISION:-fp32}
NORM=${NORM:-batch}
BIN=${BIN:-build/bin/gantry-bench-pix2pix}
BEFORE=${BEFORE:-}
OB=${OB:-}
PY=${PY:-/usr/bin/python3}

for b in "$BIN" ${BEFORE:+"$BEFORE"}; do
  if [[ ! -x $b ]]; then echo "no $b: build the target gantry-bench-pix2pix first" >&2; exit 2; fi
done
source bench/vs_torch_lib.sh
find_openblas
check_precision "$PRECISION"

# Both benchmarks print a data row "batch ranks median_ms p90_ms cpu_ms samples/s"; these
# print "samples/s cpu_ms" of the last one (nothing when the run failed).
data_row() { awk '$1 ~ /^[0-9]+$/ && NF == 6 {v = $6 " " $5} END {print v}'; }
gantry_run() {  # binary size ngf ndf batch
  mpirun --allow-run-as-root -np 2 --bind-to none -x OMP_NUM_THREADS=1 "$1" --image-size "$2" --ngf "$3" \
    --ndf "$4" --norm "$NORM" --batch-size "$5" --warmup "$WARMUP" --steps "$STEPS" --precision "$PRECISION" \
    2>/dev/null | data_row
}
torch_run() {  # size ngf ndf batch
  env -u OPENBLAS_CORETYPE LD_LIBRARY_PATH="$OB" OMP_NUM_THREADS=1 "$PY" bench/torch/pix2pix_torch.py --ddp \
    --world-size 2 --threads 1 --image-size "$1" --ngf "$2" --ndf "$3" --norm "$NORM" --batch-size "$4" \
    --warmup "$WARMUP" --steps "$STEPS" --precision "$PRECISION" 2>/dev/null | data_row
}

echo "# Pix2Pix $PRECISION, norm $NORM, 2 ranks x 1 thread, $ROUNDS alternating rounds of $WARMUP+$STEPS steps"
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
header="| px | ngf/ndf | batch/rank | gantry samples/s | PyTorch samples/s | gantry / PyTorch median [min-max] | CPU ratio |"
rule="|---|---|---|---:|---:|---|---:|"
if [[ -n $BEFORE ]]; then
  header+=" before samples/s | before / PyTorch median [min-max] | before CPU ratio |"
  rule+="---:|---|---:|"
fi
echo "$header"
echo "$rule"
for cfg in $CONFIGS; do
  IFS=: read -r size ngf ndf <<<"$cfg"
  for b in $BATCHES; do
    g=() gc=() t=() tc=() r=() p=() pc=() pr=()
    for ((k = 0; k < ROUNDS; ++k)); do
      read -r gs gcpu <<<"$(gantry_run "$BIN" "$size" "$ngf" "$ndf" "$b")" || true
      if [[ -n $BEFORE ]]; then read -r ps pcpu <<<"$(gantry_run "$BEFORE" "$size" "$ngf" "$ndf" "$b")" || true; fi
      read -r ts tcpu <<<"$(torch_run "$size" "$ngf" "$ndf" "$b")" || true
      if [[ -z ${gs:-} || -z ${ts:-} || (-n $BEFORE && -z ${ps:-}) ]]; then
        echo "| $size | $ngf/$ndf | $b | ${gs:-failed} | ${ts:-failed} | | |${BEFORE:+ ${ps:-failed} | | |}"
        continue 2
      fi
      g+=("$gs") gc+=("$gcpu") t+=("$ts") tc+=("$tcpu") r+=("$(ratio "$gs" "$ts")")
      if [[ -n $BEFORE ]]; then p+=("$ps") pc+=("$pcpu") pr+=("$(ratio "$ps" "$ts")"); fi
    done
    row="| $size | $ngf/$ndf | $b | $(med "${g[@]}") | $(med "${t[@]}") | $(spread "${r[@]}") |"
    row+=" $(times "$(med "${tc[@]}")" "$(med "${gc[@]}")") |"
    if [[ -n $BEFORE ]]; then
      row+=" $(med "${p[@]}") | $(spread "${pr[@]}") | $(times "$(med "${tc[@]}")" "$(med "${pc[@]}")") |"
    fi
    echo "$row"
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
