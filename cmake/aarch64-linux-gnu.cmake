# Cross-compiles gantry for arm64 (aarch64-linux-gnu) on an x86-64 Debian host:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake ...
# scripts/build_arm64.sh does this. Needs Debian's cross compiler
# (crossbuild-essential-arm64) and an arm64 library root made by scripts/arm64_root.sh
# (GANTRY_ARM64_ROOT, default /var/cache/gantry/arm64-root): headers and libraries come
# from the root, programs (protoc, grpc_cpp_plugin, mpiexec, pkg-config) from the host.
# With qemu-aarch64 on the host, the built programs run through it
# (CMAKE_CROSSCOMPILING_EMULATOR): gtest test discovery at build time, and ctest.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT GANTRY_ARM64_ROOT)
  if(DEFINED ENV{GANTRY_ARM64_ROOT})
    set(GANTRY_ARM64_ROOT "$ENV{GANTRY_ARM64_ROOT}")
  else()
    set(GANTRY_ARM64_ROOT /var/cache/gantry/arm64-root)
  endif()
endif()
if(NOT EXISTS "${GANTRY_ARM64_ROOT}/usr/include/stdio.h")
  message(FATAL_ERROR "No arm64 library root at GANTRY_ARM64_ROOT=${GANTRY_ARM64_ROOT}: make it with "
                      "scripts/arm64_root.sh (or point GANTRY_ARM64_ROOT at one)")
endif()
# try_compile projects read this file again: hand them the root.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GANTRY_ARM64_ROOT GANTRY_ARM64_QEMU_CPU)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_SYSROOT "${GANTRY_ARM64_ROOT}")
# GCC's notes that aarch64 passes some structs differently since GCC 10.1 concern linking
# with objects built by older compilers, which nothing here is.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (cpp-httplib) reads the root's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${GANTRY_ARM64_ROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${GANTRY_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${GANTRY_ARM64_ROOT}/usr/share/pkgconfig")

# Open MPI by hand: FindMPI would ask the host's mpicxx (amd64 paths), and the root's
# mpi-cxx.pc is a Debian alternatives link that extracting (not installing) never makes.
# Library names plus include directories make FindMPI skip its search and only check
# that an MPI program compiles and links.
set(MPI_CXX_LIB_NAMES mpi)
set(MPI_mpi_LIBRARY "${GANTRY_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/openmpi/lib/libmpi.so")
set(MPI_CXX_COMPILER_INCLUDE_DIRS "${GANTRY_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/openmpi/include")

# The emulated CPU: Neoverse N1 (Graviton2), GANTRY_ARM64_QEMU_CPU to change it. qemu's
# default ("max") has SVE, which oneDNN then JIT-compiles for and qemu emulates some 30x
# slower than NEON: a convolution test took 50 s instead of 1.7 s.
if(NOT GANTRY_ARM64_QEMU_CPU)
  if(DEFINED ENV{GANTRY_ARM64_QEMU_CPU})
    set(GANTRY_ARM64_QEMU_CPU "$ENV{GANTRY_ARM64_QEMU_CPU}")
  else()
    set(GANTRY_ARM64_QEMU_CPU neoverse-n1)
  endif()
endif()
find_program(GANTRY_QEMU_AARCH64 qemu-aarch64)
if(GANTRY_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${GANTRY_QEMU_AARCH64};-cpu;${GANTRY_ARM64_QEMU_CPU};-L;${GANTRY_ARM64_ROOT}")
endif()
