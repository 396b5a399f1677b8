#!/usr/bin/env bash
# Cross-builds gantry for arm64 (aarch64-linux-gnu, CPU only: no CUDA, portable flags) into
# build-arm64/ with Debian's cross compiler, against the arm64 library root of
# scripts/arm64_root.sh (made on first use, then cached). Usage:
#   scripts/build_arm64.sh [TARGET...]     default: gantry-worker gantry gantry-coordinator
# The host tools: GANTRY_WITH_ARM64=1 bash scripts/install_deps.sh. Honours GANTRY_JOBS
# (default 2), GANTRY_ARM64_BUILD (default build-arm64), GANTRY_ARM64_ROOT, and CMake's
# CMAKE_CXX_COMPILER_LAUNCHER (ccache) from the environment.
# Exit: 0 built; 1 failed; 77 it cannot be built here (tools or packages missing), with
# the reason printed.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${GANTRY_ARM64_BUILD:-build-arm64}
export GANTRY_ARM64_ROOT=${GANTRY_ARM64_ROOT:-/var/cache/gantry/arm64-root}
targets=("$@")
if ((${#targets[@]} == 0)); then targets=(gantry-worker gantry gantry-coordinator); fi

# The host side: the cross compiler, the emulator that runs what it builds (gtest lists
# each test binary's tests through it at build time), and the host's code generators,
# which must match the arm64 libraries' versions.
missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=("aarch64-linux-gnu-g++ (crossbuild-essential-arm64)")
command -v qemu-aarch64 >/dev/null || missing+=("qemu-aarch64 (qemu-user)")
command -v protoc >/dev/null || missing+=("protoc (protobuf-compiler)")
command -v grpc_cpp_plugin >/dev/null || missing+=("grpc_cpp_plugin (protobuf-compiler-grpc)")
command -v cmake >/dev/null || missing+=("cmake")
if ((${#missing[@]} > 0)); then
  echo "build_arm64: SKIPPED: missing ${missing[*]}; install with GANTRY_WITH_ARM64=1 bash scripts/install_deps.sh"
  exit 77
fi

bash scripts/arm64_root.sh || exit $?

# Generated code must come from the protoc and grpc_cpp_plugin of the libraries it links.
version_of_header() {  # major.minor.patch from GOOGLE_PROTOBUF_VERSION (e.g. 3021012)
  awk '/#define GOOGLE_PROTOBUF_VERSION / { v = $3; printf "%d.%d.%d\n", v / 1000000, (v / 1000) % 1000, v % 1000 }' "$1"
}
host_protoc=$(protoc --version | awk '{ print $2 }')
root_protobuf=$(version_of_header "$GANTRY_ARM64_ROOT/usr/include/google/protobuf/stubs/common.h")
host_grpc=$(dpkg-query -W -f='${Version}' protobuf-compiler-grpc 2>/dev/null | sed 's/-[^-]*$//')
root_grpc=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$GANTRY_ARM64_ROOT"/usr/lib/aarch64-linux-gnu/cmake/grpc/gRPCConfigVersion.cmake)
if [[ $host_protoc != "$root_protobuf" || ($host_grpc && $host_grpc != "$root_grpc") ]]; then
  echo "build_arm64: FAIL: the host's code generators (protoc $host_protoc, grpc_cpp_plugin ${host_grpc:-?}) do not match" \
       "the arm64 libraries (protobuf $root_protobuf, gRPC $root_grpc): upgrade the host's packages or remake" \
       "the root (rm -rf $GANTRY_ARM64_ROOT)"
  exit 1
fi

# ccache when installed (scripts/install_deps.sh does), as scripts/build.sh: a second run
# compiles only what changed.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
generator=()  # Ninja for a new folder, as scripts/build.sh says why
if [[ ! -e $build/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}" \
  -DGANTRY_CUDA=OFF -DGANTRY_NATIVE=OFF -DGANTRY_BUILD_BENCHMARKS=OFF -DGANTRY_UNITY_BUILD=ON || exit 1
cmake --build "$build" -j"${GANTRY_JOBS:-2}" --target "${targets[@]}" || exit 1
