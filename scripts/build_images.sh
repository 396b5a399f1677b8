#!/usr/bin/env bash
# Builds gantry's two images from the Dockerfile with Debian's buildah (no Docker
# daemon), smoke-tests each, and prints their sizes.
#
#   scripts/build_images.sh [--only coordinator|worker] [--tag TAG] [--base IMAGE]
#                           [--cuda [--cuda-toolkit DIR]] [--runtime-base IMAGE] [--jobs N]
#                           [--no-smoke]
#
#   --base IMAGE  the Debian 12 image to build on. Default: debian:bookworm-slim when a
#                 registry can be reached, else a local localhost/debian:bookworm made
#                 once with mmdebstrap from this machine's apt sources.
#   --cuda        the worker's CUDA variant (GANTRY_CUDA=ON; --base must have the CUDA
#                 toolkit and NCCL in /usr/local/cuda); its smoke test still trains on CPU,
#                 and checks that the CUDA backend is in (--device cuda names the missing
#                 device, not a build without CUDA)
#   --cuda-toolkit DIR  with --cuda and no --base: make the base here, the plain Debian
#                 12 base plus this machine's CUDA toolkit folder DIR (with NCCL in it, as
#                 /usr/local/cuda-13.0 here) as /usr/local/cuda: localhost/debian-cuda:bookworm
#   --runtime-base IMAGE  the base of the runtime images. Default: --base, except with
#                 --cuda: the plain Debian 12 base (the default above), because the build
#                 stage copies the CUDA libraries the worker links into the image
#
# Images: localhost/gantry-coordinator:TAG and localhost/gantry-worker:TAG (TAG defaults
# to the project version). Smoke tests, run inside the images as uid 1000:
#   coordinator  gantry-coordinator --help and gantry --help
#   worker       mpirun -np 2 gantry-worker train: 5 steps on Fashion-MNIST
# Needs root (buildah's storage) and: apt-get install buildah mmdebstrap.
# Builds use `--isolation chroot` (OCI isolation needs cgroup support that many CI
# machines and containers lack). Exit 0 when everything built and passed its smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."

only="" tag="" base="" runtime_base="" cuda=OFF cuda_toolkit="" jobs=2 smoke=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --only) only=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --cuda) cuda=ON; shift ;;
    --runtime-base) runtime_base=$2; shift 2 ;;
    --cuda-toolkit) cuda_toolkit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-smoke) smoke=0; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "build_images: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $only in ""|coordinator|worker) ;; *) echo "build_images: --only coordinator or worker" >&2; exit 2 ;; esac
[[ $(id -u) == 0 ]] || { echo "build_images: run as root (buildah's image store)" >&2; exit 2; }
command -v buildah >/dev/null || { echo "build_images: apt-get install buildah" >&2; exit 2; }
[[ -n $tag ]] || tag=$(sed -nE 's/^project\(gantry VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
[[ $cuda == ON ]] && tag="$tag-cuda"
export BUILDAH_ISOLATION=chroot

# A local Debian 12 base, for machines that reach Debian's archive but no registry.
local_base() {
  local image=localhost/debian:bookworm
  if buildah inspect --type image "$image" >/dev/null 2>&1; then echo "$image"; return; fi
  command -v mmdebstrap >/dev/null || { echo "build_images: no registry; apt-get install mmdebstrap" >&2; exit 2; }
  local tmp c mnt
  tmp=$(mktemp -d)
  # As slim as debian:bookworm-slim: no documentation, manuals or translations.
  mmdebstrap --variant=apt --mode=root --quiet \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$tmp/rootfs.tar" >&2
  c=$(buildah from scratch)
  mnt=$(buildah mount "$c")
  tar -C "$mnt" -xf "$tmp/rootfs.tar"
  buildah umount "$c" >/dev/null
  buildah config --cmd /bin/bash "$c"
  buildah commit --quiet --rm "$c" "$image" >/dev/null
  rm -rf "$tmp"
  echo "$image"
}

# The plain Debian 12 base: the registry's slim image, or a local one.
default_base() {
  if timeout 60 buildah pull --quiet docker.io/library/debian:bookworm-slim >/dev/null 2>&1; then
    echo docker.io/library/debian:bookworm-slim
  else
    echo "build_images: no registry reachable; building on a local Debian 12 base (mmdebstrap)" >&2
    local_base
  fi
}

# localhost/debian-cuda:bookworm: the plain base $2 plus the CUDA toolkit folder $1, made
# once per toolkit folder (the image's label names it; the copy is ~3 GB).
cuda_base() {
  local toolkit image=localhost/debian-cuda:bookworm c made_from
  toolkit=$(readlink -f "$1")
  if [[ ! -x $toolkit/bin/nvcc ]] || ! ls "$toolkit"/lib*/libnccl.so* >/dev/null 2>&1; then
    echo "build_images: --cuda-toolkit $1 has no bin/nvcc or no NCCL library under lib*/: give the toolkit's folder (e.g. /usr/local/cuda-13.0)" >&2
    exit 2
  fi
  made_from=$(buildah inspect --type image --format '{{index .OCIv1.Config.Labels "gantry.cuda-toolkit"}}' \
    "$image" 2>/dev/null || true)
  if [[ $made_from != "$toolkit" ]]; then
    c=$(buildah from --pull=never "$2")
    buildah copy --quiet "$c" "$toolkit" "$toolkit" >/dev/null
    buildah run "$c" -- ln -sfn "$toolkit" /usr/local/cuda
    buildah config --env PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --label "gantry.cuda-toolkit=$toolkit" "$c"
    buildah commit --quiet --rm "$c" "$image" >/dev/null
  fi
  echo "$image"
}

if [[ $cuda == ON && -z $base && -z $cuda_toolkit ]]; then
  echo "build_images: --cuda needs --base IMAGE (Debian 12 with the CUDA toolkit and NCCL in /usr/local/cuda) or --cuda-toolkit DIR" >&2
  exit 2
fi
# The plain base, looked up once where something needs it (the lookup may wait for a registry).
plain_base=""
if [[ -z $base || ( $cuda == ON && -z $runtime_base ) ]]; then plain_base=$(default_base); fi
if [[ -z $base ]]; then
  if [[ $cuda == ON ]]; then base=$(cuda_base "$cuda_toolkit" "$plain_base"); else base=$plain_base; fi
fi
if [[ -z $runtime_base ]]; then
  if [[ $cuda == ON ]]; then runtime_base=$plain_base; else runtime_base=$base; fi
fi
# Never pull what is here already (local bases exist in no registry).
pull_flag=(--pull=never)
for image in "$base" "$runtime_base"; do
  buildah inspect --type image "$image" >/dev/null 2>&1 || pull_flag=()
done

build() {  # build TARGET IMAGE
  echo "== buildah bud --target $1 (base $base, runtime base $runtime_base)"
  local start=$SECONDS
  buildah bud --isolation chroot --layers "${pull_flag[@]}" --build-arg "BASE=$base" \
    --build-arg "RUNTIME_BASE=$runtime_base" --build-arg "JOBS=$jobs" \
    --build-arg "GANTRY_CUDA=$cuda" --target "$1" -t "$2" -f Dockerfile .
  echo "== $2 built in $((SECONDS - start)) s"
}

run_in() {  # run_in IMAGE COMMAND...: as uid 1000, in a throw-away container
  local image=$1 c status=0
  shift
  c=$(buildah from --pull=never "$image")
  buildah run --isolation chroot --user 1000:1000 "$c" -- "$@" || status=$?
  buildah rm "$c" >/dev/null
  return $status
}

images=()
if [[ $only != worker ]]; then
  build coordinator "localhost/gantry-coordinator:$tag"
  images+=("localhost/gantry-coordinator:$tag")
  if ((smoke)); then
    run_in "localhost/gantry-coordinator:$tag" gantry-coordinator --help >/dev/null
    run_in "localhost/gantry-coordinator:$tag" gantry --help >/dev/null
    # The engine must not be in this image.
    if run_in "localhost/gantry-coordinator:$tag" sh -c 'ls /usr/lib/*/libmpi.so* /usr/lib/*/libdnnl.so* 2>/dev/null' | grep -q .; then
      echo "build_images: FAIL: the coordinator image carries MPI or oneDNN" >&2
      exit 1
    fi
    echo "== smoke test passed: gantry-coordinator --help, gantry --help, no engine libraries"
  fi
fi
if [[ $only != coordinator ]]; then
  build worker "localhost/gantry-worker:$tag"
  images+=("localhost/gantry-worker:$tag")
  if ((smoke)); then
    run_in "localhost/gantry-worker:$tag" sh -c 'cd /tmp && mpirun -np 2 --oversubscribe gantry-worker train \
        --dataset fashion-mnist --limit-images 512 --batch-size 32 --epochs 1 --max-steps 5 --out /tmp/smoke \
        && test -s /tmp/smoke/epochs.csv && test -x /usr/sbin/sshd && test -s /home/gantry/.sshd/sshd_config'
    echo "== smoke test passed: mpirun -np 2 gantry-worker train, 5 steps"
    if [[ $cuda == ON ]]; then
      # No GPU here: the CUDA backend must be in and its libraries load, so the run
      # stops on the missing device (a build without CUDA says so instead).
      out=$(run_in "localhost/gantry-worker:$tag" sh -c 'cd /tmp && gantry-worker train --dataset fashion-mnist \
          --limit-images 64 --batch-size 32 --epochs 1 --max-steps 1 --device cuda --out /tmp/cuda 2>&1' 2>/dev/null || true)
      if ! grep -q "no CUDA device visible" <<<"$out"; then
        echo "build_images: FAIL: --device cuda in the CUDA image did not reach the CUDA runtime:" >&2
        echo "$out" | tail -5 >&2
        exit 1
      fi
      if run_in "localhost/gantry-worker:$tag" sh -c 'ldd /usr/local/bin/gantry-worker' | grep -q "not found"; then
        echo "build_images: FAIL: gantry-worker misses libraries in the CUDA image" >&2
        exit 1
      fi
      echo "== smoke test passed: the CUDA backend is in (--device cuda reaches the CUDA runtime: no device here)"
    fi
  fi
fi

echo "== images"
for image in "${images[@]}"; do
  buildah images --format '{{.Name}}:{{.Tag}}  {{.Size}}' "$image"
done
