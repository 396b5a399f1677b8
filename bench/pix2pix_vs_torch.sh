#!/usr/bin/env bash
# Pix2Pix training throughput, gantry vs PyTorch, 2 ranks x 1 thread, side by side.
#
# For every configuration and per-rank batch, the two run BACK TO BACK, alternating
# (gantry, torch, gantry, torch, ...) ROUNDS times, so a shared machine's load hits
# both alike; the table gives each side's median samples/s over the rounds and the
# ratio gantry/torch as median [min-max] of the per-round ratios.
#
#   bench/pix2pix_vs_torch.sh                      # defaults below
#   CONFIGS="128:64:64 256:64:64 128:16:16" BATCHES="1 2 4 8" ROUNDS=3 PRECISION=fp32 bench/pix2pix_vs_torch.sh
#
# Needs build/bin/gantry-bench-pix2pix, mpirun, /usr/bin/python3 with python3-torch and
# Debian's OpenBLAS unpacked as shared/reference/README.md says (OB=... its folder).
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
OB=${OB:-/work/ob/usr/lib/x86_64-linux-gnu/openblas-openmp}
PY=${PY:-/usr/bin/python3}

if [[ ! -x $BIN ]]; then echo "no $BIN: build the target gantry-bench-pix2pix first" >&2; exit 2; fi
if [[ ! -e $OB/libblas.so.3 ]]; then
  echo "no OpenBLAS in OB=$OB: unpack libopenblas0-openmp as shared/reference/README.md says" >&2; exit 2
fi
if [[ $PRECISION == bf16 ]] && ! grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  echo "PRECISION=bf16: this CPU has no avx512_bf16/amx_bf16 units; use fp32" >&2; exit 2
fi

gantry_sps() {  # size ngf ndf batch -> samples/s (last column of the data row)
  mpirun --allow-run-as-root -np 2 --bind-to none -x OMP_NUM_THREADS=1 "$BIN" --image-size "$1" --ngf "$2" \
    --ndf "$3" --norm "$NORM" --batch-size "$4" --warmup "$WARMUP" --steps "$STEPS" --precision "$PRECISION" \
    2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF == 6 {v = $6} END {print v}'
}
torch_sps() {
  env -u OPENBLAS_CORETYPE LD_LIBRARY_PATH="$OB" OMP_NUM_THREADS=1 "$PY" bench/torch/pix2pix_torch.py --ddp \
    --world-size 2 --threads 1 --image-size "$1" --ngf "$2" --ndf "$3" --norm "$NORM" --batch-size "$4" \
    --warmup "$WARMUP" --steps "$STEPS" --precision "$PRECISION" 2>/dev/null |
    awk '$1 ~ /^[0-9]+$/ && NF == 6 {v = $6} END {print v}'
}

echo "# Pix2Pix $PRECISION, norm $NORM, 2 ranks x 1 thread, $ROUNDS alternating rounds of $WARMUP+$STEPS steps"
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| px | ngf/ndf | batch/rank | gantry samples/s | PyTorch samples/s | gantry / PyTorch median [min-max] |"
echo "|---|---|---|---:|---:|---|"
for cfg in $CONFIGS; do
  IFS=: read -r size ngf ndf <<<"$cfg"
  for b in $BATCHES; do
    g=() t=() r=()
    for ((k = 0; k < ROUNDS; ++k)); do
      gs=$(gantry_sps "$size" "$ngf" "$ndf" "$b"); ts=$(torch_sps "$size" "$ngf" "$ndf" "$b")
      if [[ -z $gs || -z $ts ]]; then echo "| $size | $ngf/$ndf | $b | ${gs:-failed} | ${ts:-failed} | |"; continue 2; fi
      g+=("$gs"); t+=("$ts"); r+=("$(awk -v a="$gs" -v b="$ts" 'BEGIN {printf "%.3f", a / b}')")
    done
    med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
    lo=$(printf '%s\n' "${r[@]}" | sort -g | head -1); hi=$(printf '%s\n' "${r[@]}" | sort -g | tail -1)
    printf '| %s | %s/%s | %s | %s | %s | %.2fx [%.2f-%.2f] |\n' "$size" "$ngf" "$ndf" "$b" "$(med "${g[@]}")" \
      "$(med "${t[@]}")" "$(med "${r[@]}")" "$lo" "$hi"
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
