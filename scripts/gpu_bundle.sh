#!/usr/bin/env bash
# Packs the CUDA build's GPU binaries, with the shared libraries they load, into a folder
# that can be carried to a GPU machine that has CUDA 13, NCCL and PyTorch but none of
# Debian's gRPC, Protobuf, Abseil, spdlog, yaml-cpp, oneDNN, Open MPI..., and run there
# without building anything:
#
#   scripts/gpu_bundle.sh [OPTIONS] [BUILD_DIR [OUT_DIR]]   # defaults: build .gpu-bundle
#   ...then, on the GPU machine, from the repository root:
#   source .gpu-bundle/env.sh && gantry_gpu_tests --gtest_brief=1
#
# Options:
#   --no-mpi      leave Open MPI (mpirun and its plugins) out
#   --no-data     leave the Fashion-MNIST files out
#   --all-data    also copy the t10k-* (test split) files, of --mnist too; gantry-worker
#                 reads only the train-* pair (worker/data/mnist_dataset.h), so they are
#                 left out by default
#   --mnist DIR   also copy the MNIST files of DIR (train-*-ubyte[.gz]) into data/mnist, for
#                 tests/train/bf16_vs_fp32.sh with DATASET mnist (data outside the
#                 repository does not travel with the working tree)
#   --data DIR    Fashion-MNIST folder to copy (default /usr/share/datasets/fashion-mnist)
#   --strip       strip the gantry binaries (smaller; no symbols in backtraces)
#
# What OUT_DIR holds (the folder to name in the device tool's `carry`):
#   payload.tar.xz   bin/ (the binaries), lib/ (their libraries), mpi/ (Open MPI), xz-packed:
#                    unpacked, the libraries alone are ~66 MB (oneDNN is 40 MB of it), which
#                    does not fit the 64 MiB that may travel; packed they are ~16 MB
#   payload.sha256   its checksum (env.sh unpacks once per checksum)
#   env.sh           source it (bash) on the GPU machine: unpacks the payload into
#                    /tmp/gantry-gpu-bundle-<sum> (GANTRY_BUNDLE_UNPACK overrides /tmp/...),
#                    sets PATH, LD_LIBRARY_PATH and the Open MPI variables, prints which
#                    CUDA/NCCL libraries will be used; returns 1 (so `&&` stops) when
#                    libcudart.so.13, libcublas.so.13 or libcublasLt.so.13 is not found, or
#                    when the machine's glibc is older than the bundle needs
#   check.sh         `bash OUT/check.sh [-v]`: ldd of every bundled binary and plugin under
#                    env.sh's settings, printing each "not found" (-v: where every library
#                    resolves from); exit 1 if anything is missing
#   data/fashion-mnist/  train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz (already
#                    gzipped, so not packed again; ~26 MB)
#   MANIFEST.txt     what was packed, from where, and what it needs
# OUT_DIR is also added to .git/info/exclude, so it stays out of git but can be carried.
#
# Which libraries travel: every library `ldd` lists for the binaries (and, for Open MPI,
# for mpirun/orted and their plugins) EXCEPT
#   - the dynamic loader, linux-vdso and glibc's own libraries (libc, libm, libmvec,
#     libpthread, libdl, librt, libresolv, libutil, libanl, libnss_*, libthread_db): they
#     must match the loader of the machine they run on; glibc is backward compatible, so
#     the only requirement is a glibc there at least as new as the GLIBC_ versions the
#     bundle uses (recorded in MANIFEST.txt and checked by env.sh);
#   - everything CUDA/NVIDIA (libcuda, libcudart, libcublas, libcublasLt, libnccl,
#     libnvidia-*, libnvrtc, libcudnn, libcufft, libcurand, libcusolver, libcusparse,
#     libnvJitLink, libnvToolsExt, libcupti): the GPU machine has them (its CUDA 13 toolkit
#     and PyTorch's nvidia-* wheels), they must match its driver, and they are far too big
#     (libnccl.so.2 is 218 MB, libcublasLt.so.13 540 MB).
# libstdc++, libgcc_s and libgomp DO travel. Our binaries were linked against Debian 12's
# GCC 12 runtime (they need GLIBCXX_3.4.30); the image's could be older (then nothing
# would start) or newer (fine, but we cannot know). Carrying ours makes the bundle run the
# same everywhere; the NVIDIA libraries loaded beside it are built for old toolchains
# (manylinux_2_17/2_28) and need far older GLIBCXX versions than GCC 12's, so our
# libstdc++ serves them too. The price: env.sh exports LD_LIBRARY_PATH with our libstdc++,
# libz, libssl... first, so run other programs (python3 with torch, for instance) in that
# shell as `gantry_bundle_clean python3 ...` (env.sh's helper that drops our
# LD_LIBRARY_PATH), or before sourcing env.sh.
#
# Open MPI (Debian 12: Open MPI 4.1 with ORTE, orterun = mpirun, external PMIx 4.2):
# mpirun, orted and ompi_info, libmpi/libopen-rte/libopen-pal/libpmix/libhwloc/libevent,
# the MCA plugins (lib/x86_64-linux-gnu/openmpi/lib/openmpi3), the PMIx plugins and
# both help-text folders travel, mirrored under mpi/ so that OPAL_PREFIX (and PMIx's
# PMIX_PREFIX) relocate them; env.sh also names the plugin folders outright
# (OMPI_MCA_mca_base_component_path, PMIX_MCA_mca_base_component_path). Plugins for
# fabrics the machine cannot have (UCX, libfabric/OFI, verbs/openib, PSM, PSM2, munge,
# netlink) are left out with their libraries, so they are not even tried; shared memory
# (vader) and TCP remain, which is all that ranks on one machine use. It adds ~2 MB
# packed. The GPU machines lent have ONE GPU, and NCCL refuses two ranks on one GPU, so
# the 2-rank NCCL runs (nccl_allreduce_np2, gpu_worker_np2, gantry-bench-nccl busbw)
# cannot run there: they report SKIP (exit 77). What mpirun there is good for: showing that
# nccl_allreduce_check and gantry-bench-nccl start (MPI_Init works) and skip cleanly,
# and 2-rank CPU runs. Single-process runs, the ones that matter, do not need it
# (gantry-worker and gantry-bench-step call MPI_Init only when started by mpirun).
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
# value_of OPTION VALUE...: VALUE, or exit 2 naming OPTION when it has none.
value_of() {
  (($# >= 2)) || { echo "gpu_bundle: $1 needs a folder (see --help)" >&2; exit 2; }
  echo "$2"
}

WITH_MPI=1 WITH_DATA=1 ALL_DATA=0 MNIST_SRC='' STRIP=0
DATA_SRC=/usr/share/datasets/fashion-mnist
POS=()
while (($#)); do
  case $1 in
    --no-mpi) WITH_MPI=0 ;;
    --no-data) WITH_DATA=0 ;;
    --all-data) ALL_DATA=1 ;;
    --mnist) MNIST_SRC=$(value_of "$@"); shift ;;
    --data) DATA_SRC=$(value_of "$@"); shift ;;
    --strip) STRIP=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "gpu_bundle: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) POS+=("$1") ;;
  esac
  shift
done
((${#POS[@]} <= 2)) || { echo "gpu_bundle: too many arguments (see --help)" >&2; exit 2; }
if [[ -n $MNIST_SRC ]]; then  # made absolute before the cd below
  [[ -d $MNIST_SRC ]] || { echo "gpu_bundle: --mnist $MNIST_SRC: no such folder" >&2; exit 2; }
  MNIST_SRC=$(cd "$MNIST_SRC" && pwd)
fi

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
BUILD=${POS[0]:-build}
OUT_ARG=${POS[1]:-.gpu-bundle}
[[ -d $BUILD ]] || { echo "gpu_bundle: no build folder $BUILD" >&2; exit 1; }
BUILD=$(cd "$BUILD" && pwd)

die() { echo "gpu_bundle: $*" >&2; exit 1; }

# --- the output folder: only ever delete one this script made -------------------------
mkdir -p "$OUT_ARG"
OUT=$(cd "$OUT_ARG" && pwd)
case $OUT in
  / | "$REPO" | "$BUILD" | "$HOME") die "refusing to use $OUT as the output folder" ;;
esac
if [[ -n $(ls -A "$OUT") && ! -e $OUT/.gantry-gpu-bundle ]]; then
  die "$OUT is not empty and was not made by this script; give another folder"
fi

# Everything is made in /tmp and lands in OUT only at the end, all at once.
STAGE=$(mktemp -d /tmp/gantry-gpu-bundle-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
NEW=$STAGE/out
mkdir -p "$STAGE/bin" "$STAGE/lib" "$NEW"
touch "$NEW/.gantry-gpu-bundle"
MANIFEST=$STAGE/MANIFEST.txt
: >"$MANIFEST"

# --- which libraries stay behind ------------------------------------------------------
# glibc (and the loader): must be the machine's own.
GLIBC_RE='^(ld-linux.*|linux-vdso|linux-gate|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnss_[a-z]*|libthread_db|libBrokenLocale|libc_malloc_debug)\.so'
# CUDA / NVIDIA: the GPU machine's, matching its driver (and too big to carry).
CUDA_RE='^(libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvidia|libnvrtc|libcudnn|libcufft|libcurand|libcusolver|libcusparse|libnvJitLink|libnvToolsExt|libnvtx|libcupti|libnvblas)[^/]*\.so'
# Network fabrics and their helpers, used only by Open MPI plugins we leave out.
FABRIC_RE='^(libfabric|libucp|libucs|libuct|libucm|libibverbs|librdmacm|libpsm_infinipath|libpsm2|libinfinipath|libefa|libmlx[45]|libnl-[a-z0-9-]*)\.so'

# ldd_deps FILE: "soname path" for each library FILE loads (transitively); "soname
# NOTFOUND" for each missing one.
ldd_deps() {
  ldd "$1" 2>/dev/null | awk '
    $2 == "=>" && $3 ~ /^\// { print $1, $3; next }
    $2 == "=>" && $3 == "not" { print $1, "NOTFOUND" }'
}

# collect_libs FILE: copies into $STAGE/lib every library FILE needs that is not left behind.
collect_libs() {
  local file=$1 name path
  while read -r name path; do
    [[ $name =~ $GLIBC_RE || $name =~ $CUDA_RE ]] && continue
    [[ $path == NOTFOUND ]] && die "$file needs $name, which ldd does not find here"
    if [[ ! -e $STAGE/lib/$name ]]; then
      cp -L "$path" "$STAGE/lib/$name"
      chmod u+w "$STAGE/lib/$name"
      echo "lib/$name <- $(readlink -f "$path")" >>"$MANIFEST"
    fi
  done < <(ldd_deps "$file")
}

# plugin_ok FILE: true when none of FILE's libraries is a fabric one or missing.
plugin_ok() {
  local name path
  while read -r name path; do
    [[ $name =~ $GLIBC_RE || $name =~ $CUDA_RE ]] && continue
    [[ $name =~ $FABRIC_RE || $path == NOTFOUND ]] && return 1
  done < <(ldd_deps "$1")
  return 0
}

# --- the binaries -----------------------------------------------------------------------
find_binary() {
  local name=$1 d
  for d in "$BUILD/bin" "$BUILD/tests" "$BUILD" "$BUILD/bench" "$BUILD/worker"; do
    [[ -f $d/$name && -x $d/$name ]] && { echo "$d/$name"; return 0; }
  done
  find "$BUILD" -maxdepth 4 -type f -name "$name" -perm -u+x -print -quit
}

echo "== binaries from $BUILD"
{
  echo "gantry GPU bundle, made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "source: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')"
  echo "build: $BUILD"
  echo
} >>"$MANIFEST"
BINARIES=()
for name in gantry_gpu_tests gantry-worker gantry-bench-step gantry-bench-nccl nccl_allreduce_check; do
  path=$(find_binary "$name")
  if [[ -z $path ]]; then
    case $name in
      gantry-bench-nccl | nccl_allreduce_check) echo "   (no $name: skipped)"; continue ;;
      *) die "no $name under $BUILD (a CUDA build is needed: cmake -DGANTRY_CUDA=ON ...)" ;;
    esac
  fi
  grep -q 'libcudart\.so' <<<"$(ldd "$path")" || die "$path does not load libcudart: not a CUDA build"
  cp "$path" "$STAGE/bin/$name"
  ((STRIP)) && strip --strip-unneeded "$STAGE/bin/$name"
  printf '   %-22s %s (%s)\n' "$name" "$path" "$(date -r "$path" '+%F %T')"
  echo "bin/$name <- $path ($(date -r "$path" '+%F %T'))" >>"$MANIFEST"
  collect_libs "$path"
  BINARIES+=("$name")
done

# --- Open MPI -----------------------------------------------------------------------------
MPI_NOTE="not bundled (--no-mpi)"
if ((WITH_MPI)); then
  MPI_NOTE=""
  mpirun_path=$(command -v mpirun || true)
  real_mpirun=${mpirun_path:+$(readlink -f "$mpirun_path")}
  if [[ -z $real_mpirun || $(basename "$real_mpirun") != orterun ]] || ! command -v ompi_info >/dev/null; then
    # Open MPI 5 (prterun + PRRTE) relocates differently; not handled here.
    MPI_NOTE="not bundled: this script handles Open MPI 4.x (orterun); found '${real_mpirun:-no mpirun}'"
    echo "== $MPI_NOTE" >&2
  fi
fi
if ((WITH_MPI)) && [[ -z $MPI_NOTE ]]; then
  echo "== Open MPI ($real_mpirun)"
  ompi_paths=$(ompi_info --path all)
  ompi_path() { awk -v k="$1:" '$1 == k && !done { print $2; done = 1 }' <<<"$ompi_paths"; }
  prefix=$(ompi_path Prefix)
  bindir=$(ompi_path Bindir)
  pkglibdir=$(ompi_path Pkglibdir)
  pkgdatadir=$(ompi_path Pkgdatadir)
  [[ $pkglibdir == "$prefix"/* && $pkgdatadir == "$prefix"/* ]] ||
    die "Open MPI's plugin or data folder is not under its prefix $prefix: cannot relocate"
  M=$STAGE/mpi
  rel_plugins=${pkglibdir#"$prefix"/}
  rel_data=${pkgdatadir#"$prefix"/}
  mkdir -p "$M/bin" "$M/$rel_plugins" "$M/$rel_data"
  for tool in orterun orted ompi_info; do
    [[ -x $bindir/$tool ]] || continue
    cp -L "$bindir/$tool" "$M/bin/$tool"
    collect_libs "$bindir/$tool"
  done
  [[ -x $M/bin/orterun ]] || die "no orterun in $bindir"
  ln -s orterun "$M/bin/mpirun"
  ln -s orterun "$M/bin/mpiexec"
  kept=0 skipped=()
  for plugin in "$pkglibdir"/*.so; do
    if plugin_ok "$plugin"; then
      cp -L "$plugin" "$M/$rel_plugins/"
      collect_libs "$plugin"
      kept=$((kept + 1))
    else
      skipped+=("$(basename "$plugin" .so)")
    fi
  done
  cp -L "$pkgdatadir"/help-*.txt "$M/$rel_data/" 2>/dev/null || true
  [[ -f $pkgdatadir/amca-param-sets ]] && cp -rL "$pkgdatadir/amca-param-sets" "$M/$rel_data/"
  echo "   $kept MCA plugins; left out (fabrics): ${skipped[*]:-none}"
  {
    echo
    echo "Open MPI: $(ompi_info --version 2>/dev/null | head -1) from $prefix"
    echo "mpi/ mirrors $prefix: mpi/$rel_plugins (plugins), mpi/$rel_data (help texts)"
    echo "MCA plugins left out (their fabric libraries stay behind): ${skipped[*]:-none}"
  } >>"$MANIFEST"
  # External PMIx: its own plugins and help texts, relocated with PMIX_PREFIX.
  libpmix=$(ldd "$pkglibdir"/mca_pmix_ext*.so 2>/dev/null | awk '$1 ~ /^libpmix\.so/ && !done { print $3; done = 1 }' || true)
  if [[ -n $libpmix ]]; then
    pmix_prefix=$(dirname "$(dirname "$(readlink -f "$libpmix")")")
    if [[ -d $pmix_prefix/lib/pmix ]]; then
      mkdir -p "$M/pmix/lib/pmix" "$M/pmix/share"
      pkept=0
      for plugin in "$pmix_prefix"/lib/pmix/*.so; do
        [[ -e $plugin ]] || continue
        if plugin_ok "$plugin"; then
          cp -L "$plugin" "$M/pmix/lib/pmix/"
          collect_libs "$plugin"
          pkept=$((pkept + 1))
        fi
      done
      [[ -d $pmix_prefix/share/pmix ]] && cp -rL "$pmix_prefix/share/pmix" "$M/pmix/share/"
      echo "   PMIx from $pmix_prefix: $pkept plugins"
      echo "PMIx: $pmix_prefix -> mpi/pmix ($pkept plugins)" >>"$MANIFEST"
    fi
  fi
  echo "$rel_plugins" >"$M/.plugin-dir"
fi

# lib_version PATH: the version of a CUDA/NCCL library file: from its real file name when
# that carries one (libcublas.so.13.1.0.3), else from the pip wheel's dist-info folder
# beside it (.../site-packages/nvidia_cublas-13.1.0.3.dist-info), else from the toolkit's
# version.json; "?" when none says.
_gb_lib_version() {
  local p=$1 real base pkg d v
  real=$(readlink -f "$p")
  base=$(basename "$real")
  if [[ $base =~ \.so\.[0-9]+\.[0-9.]+$ ]]; then echo "${base#*.so.}"; return; fi
  case $base in
    libcudart*) pkg=nvidia_cuda_runtime ;; libcublas*) pkg=nvidia_cublas ;;
    libnccl*) pkg=nvidia_nccl ;; *) pkg= ;;
  esac
  if [[ -n $pkg ]]; then
    for d in "$(dirname "$real")"/../.. "$(dirname "$real")"/../../.. "$(dirname "$real")"/..; do
      for v in "$d"/dist-info/"$pkg"*.dist-info "$d"/"$pkg"*.dist-info; do
        [[ -d $v ]] && { v=$(basename "$v" .dist-info); echo "${v##*-}"; return; }
      done
    done
    for d in "$(dirname "$real")"/.. "$(dirname "$real")"/../../..; do
      if [[ -f $d/version.json ]]; then
        v=$(tr -d '\n ' <"$d/version.json" | grep -o "\"lib${base%%.so*}\":{[^}]*}" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p' | head -1)
        [[ -n $v ]] && { echo "$v (toolkit)"; return; }
      fi
    done
  fi
  echo "?"
}

# --- what the bundle needs from the machine -------------------------------------------------
# libstdc++ and libgcc_s go to lib/gcc/, which env.sh puts on LD_LIBRARY_PATH only when
# it should (see env.sh: GANTRY_BUNDLE_LIBSTDCXX); libgomp stays in lib/ (an image need not
# have one, and it asks only for an old glibc).
mkdir -p "$STAGE/lib/gcc"
for l in libstdc++.so.6 libgcc_s.so.1; do
  [[ -e $STAGE/lib/$l ]] && mv "$STAGE/lib/$l" "$STAGE/lib/gcc/$l"
done

# versions_needed PATTERN FILE...: the newest version matching PATTERN (GLIBC_2, GLIBCXX_3,
# CXXABI_1) that the files' version references ask for, without the prefix.
versions_needed() {
  local pat=$1
  shift
  (($#)) || return 0
  objdump -p "$@" 2>/dev/null | awk '$1 ~ /^0x/ && NF == 4 { print $4 }' |
    grep -o "^${pat}[.0-9]*\$" | sed "s/^${pat%_*}_//" | sort -uV | tail -1 || true
}
# The libraries in the bundle that FILE loads (lib/gcc/ left out).
bundled_deps() {
  local name path
  while read -r name path; do
    [[ -e $STAGE/lib/$name ]] && echo "$STAGE/lib/$name"
  done < <(ldd_deps "$1")
}
# glibc each binary needs, with what it loads from the bundle; libstdc++/libgcc_s apart.
GLIBC_NEEDS=""
for b in "${BINARIES[@]}"; do
  mapfile -t deps < <(bundled_deps "$STAGE/bin/$b")
  GLIBC_NEEDS+="$b=$(versions_needed GLIBC_2 "$STAGE/bin/$b" "${deps[@]}") "
done
if [[ -x $STAGE/mpi/bin/orterun ]]; then
  mapfile -t deps < <(bundled_deps "$STAGE/mpi/bin/orterun")
  GLIBC_NEEDS+="mpirun=$(versions_needed GLIBC_2 "$STAGE/mpi/bin/orterun" "${deps[@]}") "
fi
gcc_files=("$STAGE"/lib/gcc/*)
NEED_GLIBC_GCC=$(versions_needed GLIBC_2 "${gcc_files[@]}")
mapfile -t all_but_gcc < <(find "$STAGE/bin" "$STAGE/lib" "$STAGE/mpi" -path "$STAGE/lib/gcc" -prune -o \
  -type f \( -name '*.so*' -o -perm -u+x \) -print 2>/dev/null)
NEED_GLIBCXX=$(versions_needed GLIBCXX_3 "${all_but_gcc[@]}")
NEED_CXXABI=$(versions_needed CXXABI_1 "${all_but_gcc[@]}")
cuda_needs=$(for b in "${BINARIES[@]}"; do ldd_deps "$STAGE/bin/$b"; done | awk '{print $1}' |
  grep -E "$CUDA_RE" | sort -u | tr '\n' ' ' || true)
{
  echo
  echo "glibc needed, per program (with its bundled libraries): $GLIBC_NEEDS"
  echo "bundled libstdc++/libgcc_s (lib/gcc) need glibc >= $NEED_GLIBC_GCC;" \
       "everything else needs GLIBCXX_$NEED_GLIBCXX, CXXABI_$NEED_CXXABI"
  echo "from the machine (not bundled): $cuda_needs"
  echo "built and linked here against:"
  for l in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
    p=$(ldd "$STAGE/bin/gantry-worker" | awk -v l="$l" '$1 == l { print $3 }')
    [[ -n $p ]] && echo "   $l $(_gb_lib_version "$p") ($p)"
  done
} >>"$MANIFEST"

# --- the payload ----------------------------------------------------------------------
echo "== packing (xz, one thread)"
parts=(bin lib)
[[ -d $STAGE/mpi ]] && parts+=(mpi)
tar -C "$STAGE" -cf - --owner=0 --group=0 "${parts[@]}" | xz -6 -T1 >"$NEW/payload.tar.xz"
(cd "$NEW" && sha256sum payload.tar.xz >payload.sha256)
unpacked=$(cd "$STAGE" && du -scb "${parts[@]}" | tail -1 | cut -f1)
cp "$MANIFEST" "$NEW/MANIFEST.txt"
echo "payload: $unpacked bytes unpacked" >>"$NEW/MANIFEST.txt"

# --- data -----------------------------------------------------------------------------
if ((WITH_DATA)); then
  [[ -d $DATA_SRC ]] || die "no dataset folder $DATA_SRC (give --data DIR or --no-data)"
  mkdir -p "$NEW/data/fashion-mnist"
  files=(train-images-idx3-ubyte train-labels-idx1-ubyte)
  ((ALL_DATA)) && files+=(t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
  for f in "${files[@]}"; do
    if [[ -f $DATA_SRC/$f.gz ]]; then
      cp -L "$DATA_SRC/$f.gz" "$NEW/data/fashion-mnist/"
    elif [[ -f $DATA_SRC/$f ]]; then
      gzip -9c "$DATA_SRC/$f" >"$NEW/data/fashion-mnist/$f.gz"
    else
      die "no $f[.gz] in $DATA_SRC"
    fi
  done
  echo "data/fashion-mnist <- $DATA_SRC (${files[*]})" >>"$NEW/MANIFEST.txt"
fi
if [[ -n $MNIST_SRC ]]; then
  mkdir -p "$NEW/data/mnist"
  files=(train-images-idx3-ubyte train-labels-idx1-ubyte)
  ((ALL_DATA)) && files+=(t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
  for f in "${files[@]}"; do
    if [[ -f $MNIST_SRC/$f.gz ]]; then
      cp -L "$MNIST_SRC/$f.gz" "$NEW/data/mnist/"
    elif [[ -f $MNIST_SRC/$f ]]; then
      gzip -9c "$MNIST_SRC/$f" >"$NEW/data/mnist/$f.gz"
    else
      die "--mnist $MNIST_SRC: no ${f}[.gz] there (a folder with the MNIST IDX files)"
    fi
  done
  echo "data/mnist <- $MNIST_SRC" >>"$NEW/MANIFEST.txt"
fi

# --- env.sh -----------------------------------------------------------------------------
cat >"$NEW/env.sh" <<EOF
# Source this (bash) on the GPU machine: source .gpu-bundle/env.sh && gantry_gpu_tests
# Made by scripts/gpu_bundle.sh; see MANIFEST.txt beside it.
#
# GANTRY_BUNDLE_UNPACK   where to unpack (default /tmp/gantry-gpu-bundle; -<checksum> is added)
# GANTRY_CUDA_PREFER     wheels (default): PyTorch's nvidia-* wheel folders before the CUDA
#                        toolkit's; toolkit: the other way round
# GANTRY_BUNDLE_LIBSTDCXX  auto (default): the bundled libstdc++/libgcc_s (GCC 12) when this
#                        glibc can load them, else the machine's if it has every GLIBCXX/CXXABI
#                        version needed; bundle or system force one
# GANTRY_BUNDLE_IGNORE_GLIBC=1  go on when this glibc is too old for a program (it will not start)
_gb_glibc_needs="${GLIBC_NEEDS% }"
_gb_need_glibc_gcc="${NEED_GLIBC_GCC}"
_gb_need_glibcxx="GLIBCXX_${NEED_GLIBCXX} CXXABI_${NEED_CXXABI}"
EOF
declare -f _gb_lib_version >>"$NEW/env.sh"
cat >>"$NEW/env.sh" <<'EOF'
_gb_main() {
  local home sum unpack py d f l found out missing=()
  home=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || return 1
  export GANTRY_BUNDLE_HOME=$home

  # glibc: the bundle leaves glibc behind; each program needs one at least as new as the
  # GLIBC_ versions it (and what it loads from the bundle) asks for.
  local have entry prog need too_old=()
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  _gb_ge() { [[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1) == "$2" ]]; }  # $1 >= $2
  if [[ -n $have ]]; then
    for entry in $_gb_glibc_needs; do
      prog=${entry%%=*} need=${entry#*=}
      [[ -n $need ]] && ! _gb_ge "$have" "$need" && too_old+=("$prog (needs $need)")
    done
    if ((${#too_old[@]})); then
      echo "gantry bundle: this machine's glibc is $have; too old for: ${too_old[*]}" >&2
      if [[ -z ${GANTRY_BUNDLE_IGNORE_GLIBC:-} ]]; then
        echo "gantry bundle: ERROR: (GANTRY_BUNDLE_IGNORE_GLIBC=1 goes on; those programs will not start)" >&2
        return 1
      fi
    fi
  fi

  # Unpack the payload once per checksum, outside the (carried) bundle folder.
  sum=$(cut -c1-12 "$home/payload.sha256") || return 1
  unpack=${GANTRY_BUNDLE_UNPACK:-/tmp/gantry-gpu-bundle}-$sum
  if [[ ! -f $unpack/.complete ]]; then
    if command -v sha256sum >/dev/null 2>&1 && ! (cd "$home" && sha256sum --quiet -c payload.sha256 >/dev/null 2>&1); then
      echo "gantry bundle: ERROR: $home/payload.tar.xz does not match payload.sha256 (damaged or half copied)" >&2
      return 1
    fi
    rm -rf "$unpack.part" && mkdir -p "$unpack.part" || return 1
    # xz, else Python's tarfile (it reads xz too).
    if ! { command -v xz >/dev/null 2>&1 && xz -dc "$home/payload.tar.xz" 2>/dev/null | tar -C "$unpack.part" -xf - 2>/dev/null; }; then
      local pyx unpacked=
      rm -rf "$unpack.part" && mkdir -p "$unpack.part" || return 1
      for pyx in python3 /opt/torch/.venv/bin/python3; do
        command -v "$pyx" >/dev/null 2>&1 || continue
        env -u LD_LIBRARY_PATH "$pyx" - "$home/payload.tar.xz" "$unpack.part" <<'PY' && { unpacked=1; break; }
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
    t.extractall(sys.argv[2], **kw)
PY
      done
      [[ -n $unpacked ]] || { echo "gantry bundle: ERROR: could not unpack $home/payload.tar.xz (no working xz or python3)" >&2; return 1; }
    fi
    touch "$unpack.part/.complete"
    rm -rf "$unpack" && mv "$unpack.part" "$unpack" || return 1
  fi
  export GANTRY_BUNDLE=$unpack
  export GANTRY_DATA_DIR=$home/data/fashion-mnist

  # Where CUDA 13 and NCCL live there: PyTorch's nvidia-* wheels (the versions this was
  # built against came from the same wheels) and the CUDA toolkit. GANTRY_CUDA_PREFER=toolkit
  # puts the toolkit's folders first.
  local wheels=() toolkit=() pys=()
  command -v python3 >/dev/null 2>&1 && pys+=(python3)
  [[ -x /opt/torch/.venv/bin/python3 ]] && pys+=(/opt/torch/.venv/bin/python3)
  for py in "${pys[@]}"; do
    out=$(env -u LD_LIBRARY_PATH timeout 60 "$py" - 2>/dev/null <<'PY'
import glob, importlib.util as u, os
s = u.find_spec("nvidia")
for p in (list(s.submodule_search_locations) if s and s.submodule_search_locations else []):
    for d in sorted(glob.glob(os.path.join(p, "*", "lib"))):
        print(d)
s = u.find_spec("torch")
if s and s.origin:
    print(os.path.join(os.path.dirname(s.origin), "lib"))
PY
) || true
    while IFS= read -r d; do [[ -n $d ]] && wheels+=("$d"); done <<<"$out"
  done
  for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib /opt/torch/.venv/lib/python3*/site-packages/torch/lib; do
    [[ -d $d ]] && wheels+=("$d")
  done
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib; do
    [[ -d $d ]] && toolkit+=("$d")
  done
  local order=()
  if [[ ${GANTRY_CUDA_PREFER:-wheels} == toolkit ]]; then order=("${toolkit[@]}" "${wheels[@]}"); else order=("${wheels[@]}" "${toolkit[@]}"); fi
  # torch/lib last: it holds torch's own copies of other libraries.
  local cuda_dirs=() seen=" " real
  for d in "${order[@]}"; do
    [[ $d == */torch/lib ]] && continue
    real=$(readlink -f "$d") || continue
    [[ $seen == *" $real "* ]] && continue
    seen+="$real "
    cuda_dirs+=("$d")
  done
  for d in "${order[@]}"; do
    [[ $d == */torch/lib ]] || continue
    real=$(readlink -f "$d") || continue
    [[ $seen == *" $real "* ]] && continue
    seen+="$real "
    cuda_dirs+=("$d")
  done

  # The driver (libcuda.so.1): normally found through ld.so.cache or the image's own
  # LD_LIBRARY_PATH (kept below); else try the usual mount points.
  local ldconfig_bin
  for ldconfig_bin in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do command -v "$ldconfig_bin" >/dev/null 2>&1 && break; done
  local old=${GANTRY_BUNDLE_OLD_LD_LIBRARY_PATH-${LD_LIBRARY_PATH:-}}
  export GANTRY_BUNDLE_OLD_LD_LIBRARY_PATH=$old
  found=$("$ldconfig_bin" -p 2>/dev/null | awk '$1 == "libcuda.so.1" { print $NF }' |
    while read -r f; do [[ -e $f ]] && { echo "$f"; break; }; done)
  if [[ -z $found ]]; then
    for d in ${old//:/ }; do [[ -e $d/libcuda.so.1 ]] && found=1; done
    if [[ -z $found ]]; then
      for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        [[ -e $d/libcuda.so.1 ]] && { cuda_dirs+=("$d"); break; }
      done
    fi
  fi

  # libstdc++/libgcc_s: ours (GCC 12) when this glibc can load them, else the machine's
  # when it has every version our programs ask for.
  local cxx=${GANTRY_BUNDLE_LIBSTDCXX:-auto} syscxx v ok
  syscxx=$("$ldconfig_bin" -p 2>/dev/null | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF }' |
    while read -r f; do [[ -e $f ]] && { echo "$f"; break; }; done)
  if [[ $cxx == auto ]]; then
    cxx=bundle
    if [[ -n $have ]] && ! _gb_ge "$have" "$_gb_need_glibc_gcc"; then
      ok=${syscxx:+1}
      for v in $_gb_need_glibcxx; do [[ -n $ok ]] && ! grep -aqF "$v" "$syscxx" && ok=; done
      [[ -n $ok ]] && cxx=system
    fi
  fi
  local path=$GANTRY_BUNDLE/lib
  [[ $cxx == system ]] || path+=:$GANTRY_BUNDLE/lib/gcc
  for d in "${cuda_dirs[@]}"; do path+=:$d; done
  [[ -n $old ]] && path+=:$old
  export LD_LIBRARY_PATH=$path
  local bins=$GANTRY_BUNDLE/bin
  [[ -d $GANTRY_BUNDLE/mpi/bin ]] && bins+=:$GANTRY_BUNDLE/mpi/bin
  [[ :$PATH: == *":$bins:"* ]] || export PATH=$bins:$PATH

  # Open MPI 4.x, relocated.
  if [[ -d $GANTRY_BUNDLE/mpi ]]; then
    export OPAL_PREFIX=$GANTRY_BUNDLE/mpi
    export OMPI_MCA_mca_base_component_path=$GANTRY_BUNDLE/mpi/$(cat "$GANTRY_BUNDLE/mpi/.plugin-dir")
    if [[ -d $GANTRY_BUNDLE/mpi/pmix ]]; then
      export PMIX_PREFIX=$GANTRY_BUNDLE/mpi/pmix PMIX_INSTALL_PREFIX=$GANTRY_BUNDLE/mpi/pmix
      export PMIX_MCA_mca_base_component_path=$GANTRY_BUNDLE/mpi/pmix/lib/pmix
    fi
    export OMPI_MCA_btl_base_warn_component_unused=0
    # Single-copy shared memory (CMA) needs ptrace rights a VM or sandbox may refuse.
    export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
    if [[ $(id -u) == 0 ]]; then
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
  fi

  # What the dynamic loader will pick, in LD_LIBRARY_PATH order, then ld.so.cache.
  local dirs
  IFS=: read -r -a dirs <<<"$LD_LIBRARY_PATH"
  echo "gantry bundle: $GANTRY_BUNDLE (from $home); glibc ${have:-?}; libstdc++: $cxx$([[ $cxx == system ]] && echo " ($syscxx)")"
  for l in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2 libcuda.so.1; do
    found=
    for d in "${dirs[@]}"; do
      [[ -n $d && -e $d/$l ]] && { found=$d/$l; break; }
    done
    if [[ -z $found ]]; then
      found=$("$ldconfig_bin" -p 2>/dev/null | awk -v l="$l" '$1 == l && /x86-64/ { print $NF }' |
        while read -r f; do [[ -e $f ]] && { echo "$f"; break; }; done)
    fi
    if [[ -n $found ]]; then
      printf 'gantry bundle:   %-18s %-12s %s\n' "$l" "$(_gb_lib_version "$found")" "$found"
    else
      printf 'gantry bundle:   %-18s NOT FOUND\n' "$l"
      missing+=("$l")
    fi
  done
  local m fatal=()
  for m in "${missing[@]}"; do
    case $m in
      libcudart.so.13 | libcublas.so.13 | libcublasLt.so.13) fatal+=("$m") ;;
      libnccl.so.2) echo "gantry bundle: WARNING: no libnccl.so.2: gantry-worker, gantry-bench-step, gantry-bench-nccl and nccl_allreduce_check will not start (gantry_gpu_tests will)" >&2 ;;
      libcuda.so.1) echo "gantry bundle: WARNING: no libcuda.so.1 (the driver): CUDA calls will fail and the GPU tests skip" >&2 ;;
    esac
  done
  if ((${#fatal[@]})); then
    echo "gantry bundle: ERROR: ${fatal[*]} not found; searched: ${cuda_dirs[*]:-(no CUDA folder found)} ${old:+and $old} and ld.so.cache." >&2
    echo "gantry bundle:        looked for /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib, torch/lib, /usr/local/cuda/{lib64,targets/x86_64-linux/lib,lib}" >&2
    return 1
  fi
  return 0
}

# Runs a command without the bundle's LD_LIBRARY_PATH (python3 with torch, for instance).
gantry_bundle_clean() {
  if [[ -n ${GANTRY_BUNDLE_OLD_LD_LIBRARY_PATH:-} ]]; then
    LD_LIBRARY_PATH=$GANTRY_BUNDLE_OLD_LD_LIBRARY_PATH "$@"
  else
    env -u LD_LIBRARY_PATH "$@"
  fi
}

# ldd of every bundled binary and plugin; prints "not found" lines (with -v, where each
# library resolves from). Status 1 when anything is missing.
gantry_bundle_check() {
  local verbose=0 f bad=0 lines
  [[ ${1:-} == -v ]] && verbose=1
  while IFS= read -r -d '' f; do
    lines=$(ldd "$f" 2>&1)
    if grep -q 'not found' <<<"$lines"; then
      echo "$f:"; grep 'not found' <<<"$lines"; bad=1
    fi
    if ((verbose)); then
      echo "== $f"
      awk -v b="$GANTRY_BUNDLE/lib/" '$2 == "=>" && $3 ~ /^\// {
        if (index($3, b) == 1) where = "bundle"
        else if ($1 ~ /^(libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libanl)\.so/) where = "glibc"
        else if ($1 ~ /^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia|nvrtc|cudnn|cufft|curand|cusolver|cusparse|nvJitLink|nvToolsExt|cupti)/) where = "cuda"
        else where = "OTHER"
        printf "   %-7s %-40s %s\n", where, $1, $3 }' <<<"$lines"
    fi
  done < <(find "$GANTRY_BUNDLE/bin" "$GANTRY_BUNDLE/mpi" -type f \( -perm -u+x -o -name '*.so' \) -print0 2>/dev/null)
  ((bad)) && { echo "gantry bundle: some libraries are not found (above)"; return 1; }
  echo "gantry bundle: every bundled binary and plugin finds all its libraries"
}

# Makes /usr/share/datasets/fashion-mnist (the tests' and the worker's default) point at
# the bundle's copy; for tests/gpu/gpu_worker_e2e.sh, which has that path built in. Root only.
gantry_bundle_link_dataset() {
  [[ -d $GANTRY_DATA_DIR ]] || { echo "gantry bundle: no data in the bundle" >&2; return 1; }
  if [[ -e /usr/share/datasets/fashion-mnist ]]; then
    echo "gantry bundle: /usr/share/datasets/fashion-mnist exists already; left as it is"
    return 0
  fi
  mkdir -p /usr/share/datasets && ln -s "$GANTRY_DATA_DIR" /usr/share/datasets/fashion-mnist
}

# Whatever the sourcing shell's options (set -e, -u, pipefail), run with none, then restore them.
_gb_opts=$(set +o)
set +euo pipefail
_gb_main
_gb_rc=$?
eval "$_gb_opts"
unset _gb_opts
return $_gb_rc 2>/dev/null || exit $_gb_rc
EOF

cat >"$NEW/check.sh" <<'EOF'
#!/usr/bin/env bash
# ldd check of the bundle under env.sh's settings: bash .gpu-bundle/check.sh [-v]
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1
gantry_bundle_check "$@"
EOF
chmod +x "$NEW/check.sh"

# --- keep it out of git (but carriable) ---------------------------------------------------
rel_out=${OUT#"$REPO"/}
if [[ $rel_out != "$OUT" ]]; then
  exclude=$(git -C "$REPO" rev-parse --git-path info/exclude)
  [[ $exclude == /* ]] || exclude=$REPO/$exclude
  mkdir -p "$(dirname "$exclude")"
  touch "$exclude"
  grep -qxF "/$rel_out/" "$exclude" || echo "/$rel_out/" >>"$exclude"
  git -C "$REPO" check-ignore -q --no-index "$OUT/env.sh" || echo "gpu_bundle: WARNING: $OUT is not ignored by git" >&2
else
  echo "gpu_bundle: WARNING: $OUT is outside the repository: the device tool carries only folders inside it" >&2
fi
find "$OUT" -mindepth 1 -delete
cp -a "$NEW"/. "$OUT"/

# --- sizes and how to use it ----------------------------------------------------------------
bundle_size=$(du -sb "$OUT" | cut -f1)
# Bytes of the files git lists (xargs may run stat several times, so sum here, not du -c).
bytes_of() { (cd "$REPO" && git ls-files -z "$@" | xargs -0 -r stat -L -c %s 2>/dev/null || true) | awk '{ s += $1 } END { print s + 0 }'; }
tracked=$(bytes_of -- . ":(exclude)$rel_out")
untracked=$(bytes_of --others --exclude-standard -- . ":(exclude)$rel_out")
if [[ -n $(git -C "$REPO" ls-files -- "$rel_out") ]]; then
  echo "gpu_bundle: WARNING: git tracks files under $rel_out (committed by mistake?): they travel as" >&2
  echo "            tracked files too; untrack them with: git rm -r --cached $rel_out" >&2
fi
shared=0
[[ -d $REPO/shared ]] && shared=$(du -sb "$REPO/shared" | cut -f1)
limit=$((64 * 1024 * 1024))
total=$((bundle_size + tracked + untracked + shared))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo
echo "== bundle $OUT"
(cd "$OUT" && du -ab --max-depth=2 . | sort -k2 | awk '{ printf "   %10d  %s\n", $1, $2 }')
echo "   payload unpacked: $(mib "$unpacked")  (packed $(mib "$(stat -c %s "$OUT/payload.tar.xz")"))"
echo "   needs on the machine: glibc per program: $GLIBC_NEEDS(bundled libstdc++: $NEED_GLIBC_GCC); $cuda_needs(not bundled)"
echo "   Open MPI: ${MPI_NOTE:-bundled}"
echo "== what travels: bundle $(mib "$bundle_size") + tracked files $(mib "$tracked") + untracked $(mib "$untracked")$( ((shared)) && echo " + shared/ $(mib "$shared")") = $(mib "$total") of $(mib "$limit")"
if ((total > limit)); then
  echo "gpu_bundle: WARNING: over the device tool's 64 MiB; try --no-data, --no-mpi or --strip" >&2
elif ((total > limit * 7 / 8)); then
  echo "gpu_bundle: WARNING: within 1/8 of the 64 MiB limit" >&2
fi
cat <<EOF

== on the GPU machine (device tool): carry ["$rel_out"], command e.g.
   source $rel_out/env.sh && bash $rel_out/check.sh && nvidia-smi -L && gantry_gpu_tests --gtest_brief=1
   source $rel_out/env.sh && gantry-worker train --device cuda --data-dir "\$GANTRY_DATA_DIR" --limit-images 4096 --batch-size 64 --epochs 1 --precision bf16 --out /tmp/run-bf16
   source $rel_out/env.sh && gantry-bench-step --help
   source $rel_out/env.sh && gantry_bundle_link_dataset && bash tests/gpu/gpu_worker_e2e.sh mpirun "\$GANTRY_BUNDLE/bin/gantry-worker" single
   source $rel_out/env.sh && mpirun -np 2 --oversubscribe nccl_allreduce_check   # exit 77 (SKIP) with one GPU
EOF
