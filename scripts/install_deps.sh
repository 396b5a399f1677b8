#!/usr/bin/env bash
# Installs everything gantry needs to build, test and train on Debian 12, from Debian's
# own packages. Idempotent: does nothing when all packages are present. Run as root (or
# with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache openssl
  curl                    # the docs' downloads (digit MNIST) and /metrics examples
  libeigen3-dev libabsl-dev libspdlog-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  zlib1g-dev libpng-dev libgtest-dev libgmock-dev libbenchmark-dev
  libjpeg62-turbo-dev libwebp-dev  # make-dataset's JPEG and WebP decoders (libpng decodes PNG)
  libopenmpi-dev openmpi-bin
  # The coordinator: gRPC and Protobuf (C++ and the code generators), SQLite for the job
  # store, and Python's gRPC tools for the language-neutrality test's client.
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libsqlite3-dev
  python3-grpc-tools
  # The Python client (python/) and its tests: Debian's Python with gRPC, Protobuf and
  # PyYAML (run files), pip and setuptools to build it offline, pytest.
  python3-grpcio python3-protobuf python3-yaml python3-pip python3-setuptools python3-wheel python3-venv
  python3-pytest
  libcpp-httplib-dev      # the coordinator's HTTP listener: dashboard and /metrics (--http-listen)
  libdnnl-dev             # oneDNN: the fast CPU kernels (GANTRY_ONEDNN=AUTO builds them when present)
  ocl-icd-opencl-dev      # oneDNN's CMake config requires OpenCL (only recommended by libdnnl-dev)
  dataset-fashion-mnist   # the default dataset: /usr/share/datasets/fashion-mnist
  # The emulated hosts (scripts/emulated_hosts.sh and its fault tests): ip and tc, nsenter
  # and unshare; iperf3 and ping for its link check; strace, which the fencing test
  # watches the cut-off pool with.
  iproute2 util-linux iperf3 iputils-ping strace
)
# The decoders gantry-bench-images measures beside gantry's (docs/images.md) are optional:
# the benchmark leaves out what it does not find (libvips alone brings ~100 libraries).
if [[ "${GANTRY_WITH_IMAGE_BENCH:-0}" == 1 ]]; then packages+=(libstb-dev libvips-dev); fi
# Reference comparisons (PyTorch goldens, PIL's resampling for scripts/make_image_goldens.py,
# benchmarks side by side) are optional.
if [[ "${GANTRY_WITH_TORCH:-0}" == 1 ]]; then packages+=(python3-torch python3-numpy python3-pil); fi
# The arm64 cross build and its tests under emulation (scripts/build_arm64.sh,
# scripts/test_arm64.sh): Debian's cross compiler, qemu-user, and mmdebstrap to extract the
# arm64 libraries into a root of their own (the host's packages stay amd64 only).
if [[ "${GANTRY_WITH_ARM64:-0}" == 1 ]]; then packages+=(crossbuild-essential-arm64 qemu-user mmdebstrap); fi
# The dashboard's end-to-end test opens the page in headless Chromium (scripts/test.sh
# installs it; the test fails without it).
if [[ "${GANTRY_WITH_BROWSER:-0}" == 1 ]]; then packages+=(chromium); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
