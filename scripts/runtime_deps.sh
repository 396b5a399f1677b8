#!/usr/bin/env bash
# What the given binaries need at run time, for a slim runtime image: the Debian packages
# that own their shared libraries go to OUT/packages.txt (one per line, with the
# architecture), and any library no package owns (a CUDA toolkit or NCCL installed
# outside dpkg) is copied into OUT/lib/.
#
#   scripts/runtime_deps.sh OUT BINARY...
#
# Exit 1 when a binary has a library ldd cannot find.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT BINARY..." >&2
  exit 2
fi
out=$1
shift
mkdir -p "$out/lib"
if ldd "$@" | grep -q 'not found'; then
  echo "runtime_deps: missing libraries: $(ldd "$@" | grep 'not found' | tr -s ' \t' ' ')" >&2
  exit 1
fi

packages=()
# On a merged-/usr system a library may be recorded under /lib or /usr/lib.
owner() {
  local path
  for path in "$1" "/usr$1" "${1#/usr}"; do
    dpkg -S "$path" 2>/dev/null | head -n 1 | sed 's/: .*//' && return 0
  done
  return 1
}
while read -r lib; do
  real=$(readlink -f "$lib")
  if pkg=$(owner "$lib") || pkg=$(owner "$real"); then
    packages+=("$pkg")
  else
    cp -L "$lib" "$out/lib/"
    echo "runtime_deps: $lib belongs to no package; copied" >&2
  fi
done < <(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u)
printf '%s\n' "${packages[@]}" | sort -u >"$out/packages.txt"
