#!/usr/bin/env bash
# Debian's python3-torch over Debian's OpenBLAS instead of the reference BLAS, without
# installing anything system-wide (bench/torch/README.md, "A fair PyTorch", says why).
#
#   bench/torch/fair_torch.sh                 # prints the folder to put in LD_LIBRARY_PATH
#   bench/torch/fair_torch.sh CMD [ARGS...]   # runs CMD with that folder first in
#                                             # LD_LIBRARY_PATH and OPENBLAS_CORETYPE unset
#   bench/torch/fair_torch.sh --check         # which libblas.so.3 torch loads, without and with
#
#   bench/torch/fair_torch.sh /usr/bin/python3 bench/torch/dcgan_torch.py --ddp --world-size 2
#
# The first use fetches libopenblas0-openmp with `apt-get download` (no root needed; the
# package lists must be there, i.e. `apt-get update` has run once) and unpacks it with
# `dpkg -x` into a cache folder outside the repository:
#   GANTRY_OPENBLAS_CACHE   the cache (default ${XDG_CACHE_HOME:-~/.cache}/gantry/openblas)
#   FAIR_TORCH_CORETYPE     run CMD with OPENBLAS_CORETYPE set to this (e.g. Haswell, to hold
#                           OpenBLAS to AVX2 kernels on purpose); by default it is unset,
#                           because a value left in the environment silently slows OpenBLAS
#   PY                      the interpreter --check uses (default /usr/bin/python3)
# Exit status: CMD's own; 2 when the package cannot be fetched or used (the message says why).
set -euo pipefail

PACKAGE=libopenblas0-openmp
CACHE=${GANTRY_OPENBLAS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry/openblas}
PY=${PY:-/usr/bin/python3}

die() { echo "fair_torch: $*" >&2; exit 2; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi

# The unpacked package's folder that holds libblas.so.3 (OpenBLAS under the BLAS soname).
blas_dir() {
  local lib
  lib=$(find "$CACHE/root" -path '*/openblas-openmp/libblas.so.3' -print -quit 2>/dev/null || true)
  [[ -n $lib ]] && dirname "$lib"
}

fetch() {
  if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
    die "needs Debian's apt-get and dpkg to fetch $PACKAGE"
  fi
  mkdir -p "$CACHE" || die "cannot create the cache folder $CACHE (set GANTRY_OPENBLAS_CACHE)"
  local work
  work=$(mktemp -d "$CACHE/fetch.XXXXXX")
  chmod 755 "$work"   # apt-get hands the download to its _apt user
  trap 'rm -rf "$work"' EXIT
  echo "fair_torch: fetching $PACKAGE into $CACHE (once)" >&2
  (cd "$work" && timeout 300 apt-get download -q "$PACKAGE" >&2) ||
    die "apt-get download $PACKAGE failed; run 'apt-get update' (as root) once, then retry"
  local deb
  deb=$(find "$work" -maxdepth 1 -name "${PACKAGE}_*.deb" -print -quit)
  [[ -n $deb ]] || die "apt-get download left no ${PACKAGE}_*.deb in $work"
  dpkg -x "$deb" "$work/root" || die "dpkg -x $deb failed"
  basename "$deb" >"$work/root/PACKAGE"
  # Another run may have unpacked it meanwhile; either copy will do.
  mv -T "$work/root" "$CACHE/root" 2>/dev/null || true
  rm -rf "$work"
  trap - EXIT
}

dir=$(blas_dir || true)
if [[ -z $dir ]]; then
  fetch
  dir=$(blas_dir || true)
  [[ -n $dir ]] || die "$PACKAGE unpacked in $CACHE/root has no openblas-openmp/libblas.so.3"
fi
missing=$(ldd "$dir/libblas.so.3" | awk '/not found/ {print $1}')
[[ -z $missing ]] || die "OpenBLAS in $dir needs $missing (apt-get install the package that has it)"

run_fair() {
  local path="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [[ -n ${FAIR_TORCH_CORETYPE:-} ]]; then
    env OPENBLAS_CORETYPE="$FAIR_TORCH_CORETYPE" LD_LIBRARY_PATH="$path" "$@"
  else
    env -u OPENBLAS_CORETYPE LD_LIBRARY_PATH="$path" "$@"
  fi
}

loaded_blas() {  # the libblas.so.3 a torch matrix product runs in, as the loader found it
  "$@" "$PY" -c 'import torch; torch.mm(torch.ones(4, 4), torch.ones(4, 4))
print(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libblas" in l}))'
}

case ${1:-} in
  "") echo "$dir" ;;
  --check)
    echo "package: $(cat "$CACHE/root/PACKAGE" 2>/dev/null || echo "$PACKAGE")"
    echo "without: $(loaded_blas env)"
    echo "with:    $(loaded_blas run_fair)"
    ;;
  *) run_fair "$@" ;;
esac
