# Shared by the gantry-vs-PyTorch comparisons (bench/pix2pix_vs_torch.sh,
# bench/images_vs_torch.sh), sourced after `cd` to the repository root: OpenBLAS for a
# fair PyTorch (OB), the bf16 check, and the table's arithmetic.

# OB: the folder with OpenBLAS's libblas.so.3 that PyTorch runs over (bench/torch/fair_torch.sh
# fetches it on first use; bench/torch/README.md, "A fair PyTorch"), unless set already.
find_openblas() {
  if [[ -z ${OB:-} ]]; then
    OB=$(bench/torch/fair_torch.sh) ||
      { echo "no OpenBLAS for PyTorch: bench/torch/fair_torch.sh failed (see above)" >&2; exit 2; }
  fi
  if [[ ! -e $OB/libblas.so.3 ]]; then
    echo "no libblas.so.3 in OB=$OB: name OpenBLAS's folder, or leave OB unset (fair_torch.sh)" >&2
    exit 2
  fi
}

# PRECISION=bf16 only where lscpu lists avx512_bf16 or amx_bf16.
check_precision() {
  if [[ $1 == bf16 ]] && ! grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
    echo "PRECISION=bf16: this CPU has no avx512_bf16/amx_bf16 units; use fp32" >&2; exit 2
  fi
}

med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
times() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
spread() { printf '%.2fx [%.2f-%.2f]' "$(med "$@")" "$(printf '%s\n' "$@" | sort -g | head -1)" \
  "$(printf '%s\n' "$@" | sort -g | tail -1)"; }
