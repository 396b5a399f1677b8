#!/usr/bin/env bash
# The control plane links no engine: gantry-coordinator and gantry must not load
# oneDNN, CUDA (runtime, cuBLAS), MPI or NCCL, directly (readelf: NEEDED entries) or
# through another library (ldd: the whole load list). Their image carries none of it.
#   engine_free_test.sh BINARY...
set -euo pipefail
engine='libdnnl|libcublas|libcublasLt|libcudart|libcuda\.|libmpi|libopen-rte|libopen-pal|libnccl|libgomp'
status=0
for binary in "$@"; do
  [[ -x "$binary" ]] || { echo "FAIL: $binary is not an executable"; status=1; continue; }
  needed=$(readelf -d "$binary" | awk '/NEEDED/ {gsub(/[][]/, "", $5); print $5}')
  loaded=$(ldd "$binary" | awk '{print $1}')
  if bad=$(printf '%s\n%s\n' "$needed" "$loaded" | grep -E "$engine" | sort -u) && [[ -n "$bad" ]]; then
    echo "FAIL: $(basename "$binary") links engine libraries: $(echo $bad)"
    status=1
  else
    echo "ok: $(basename "$binary") loads $(echo "$loaded" | wc -l) libraries, none of the engine's"
  fi
done
exit $status
