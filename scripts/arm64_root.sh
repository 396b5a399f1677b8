#!/usr/bin/env bash
# Makes the arm64 library root that the cross build compiles against (CMAKE_SYSROOT in
# cmake/aarch64-linux-gnu.cmake) and that qemu-aarch64 runs the binaries in (-L): Debian's
# arm64 -dev packages of everything gantry links, extracted (not installed) into a folder
# outside the repository. The host's own packages are never touched: no dpkg
# --add-architecture, whose :arm64 -dev packages would fight the amd64 ones the main build
# needs over files that are not Multi-Arch: same.
#
# The root is cached: GANTRY_ARM64_ROOT (default /var/cache/gantry/arm64-root). A root
# whose recorded package list and suite match is reused as it is; otherwise it is made
# anew next to it and swapped in only when complete.
#
# Exit: 0 the root is ready; 1 making it failed; 77 it cannot be made here (mmdebstrap
# missing, or no Debian mirror reachable), with the reason printed.
set -euo pipefail

root=${GANTRY_ARM64_ROOT:-/var/cache/gantry/arm64-root}
mirror=${GANTRY_ARM64_MIRROR:-http://deb.debian.org/debian}
security_mirror=${GANTRY_ARM64_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# The host's release: the arm64 libraries must be the versions its protoc and
# grpc_cpp_plugin generate code for.
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

# scripts/install_deps.sh's list, arm64 side: what gantry-worker, gantry,
# gantry-coordinator and the unit tests link, plus the C/C++ runtime to link against.
# protobuf-compiler-grpc only because gRPC's CMake config insists its (arm64)
# grpc_cpp_plugin exists; the build runs the host's.
packages=(
  libc6-dev libstdc++-12-dev
  libeigen3-dev libabsl-dev libspdlog-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  zlib1g-dev libpng-dev libjpeg62-turbo-dev libwebp-dev libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin
  libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc libsqlite3-dev libcpp-httplib-dev
  libdnnl-dev ocl-icd-opencl-dev
)
recipe="suite=$suite packages=${packages[*]}"
stamp=.gantry-arm64-root

if [[ -f "$root/$stamp" && "$(cat "$root/$stamp")" == "$recipe" ]]; then
  echo "arm64_root: reusing $root"
  exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
  echo "arm64_root: SKIPPED: mmdebstrap is not installed (GANTRY_WITH_ARM64=1 bash scripts/install_deps.sh)"
  exit 77
fi
host=${mirror#*://}
host=${host%%/*}
if ! timeout 10 bash -c "exec 3<>/dev/tcp/$host/80" 2>/dev/null; then
  echo "arm64_root: SKIPPED: $host cannot be reached to fetch the arm64 packages (set GANTRY_ARM64_MIRROR)"
  exit 77
fi

# Absolute links inside the root (/lib/ld-linux-aarch64.so.1 -> /lib/aarch64-linux-gnu/...)
# would resolve on the host, to amd64 files or to nothing: point each at its file in the
# root. (dev/'s links into /proc stay: they mean the running process wherever it runs.)
relativize_links() {
  local dir=$1 link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$dir$target")" "$link"
  done < <(find "$dir" -path "$dir/dev" -prune -o -type l -lname '/*' -print0)
}

mkdir -p "$(dirname "$root")"
fresh=$(mktemp -d "$root.new.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
echo "arm64_root: extracting ${#packages[@]} packages and their dependencies ($suite, arm64) into $root"
include=$(IFS=,; echo "${packages[*]}")
if ! mmdebstrap --quiet --variant=extract --architectures=arm64 --include="$include" "$suite" "$fresh" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main"; then
  echo "arm64_root: FAIL: mmdebstrap could not make the arm64 root (see above)"
  exit 1
fi
relativize_links "$fresh"
echo "$recipe" >"$fresh/$stamp"
rm -rf "$root"
mv "$fresh" "$root"
trap - EXIT
echo "arm64_root: ready: $root ($(du -sh "$root" | cut -f1))"
