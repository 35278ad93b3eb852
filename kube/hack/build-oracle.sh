#!/usr/bin/env bash
# Builds the oracle node (conformance/oracle/cmd/oraclenode: the real kubelet
# on the in-process CRI runtime that carries out simruntime's behaviours) into
# a cache outside the clone, and prints the directory holding the oraclenode
# binary on stdout. A run that finds the binary there builds nothing.
#
# The cache key covers the Kubernetes version and a hash of what the binary
# is built from: the oracle module's sources, go.mod and go.sum, and the
# sources of the root module's packages it imports (simruntime and the
# packages below it), with the root go.mod and go.sum. A change to any of
# them builds a new binary into a new directory.
#
# Two runs at once do not race: the build holds an flock on a file in the
# cache, and the second run waits for it and then finds the binary. The
# binary is built into a temporary directory beside the final one, which is
# renamed into place once it is there.
#
# Not -trimpath, and the Go build cache is the user's own: the kubelet's
# packages are compiled once for this binary, the conformance module's tests
# and the control plane (see build-control-plane.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mod="$repo/conformance/oracle"
k8s_version=v1.37.2
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly

# What the binary is built from, in a fixed order: each file's path relative
# to the repository and its content.
sources() {
  local d
  (cd "$mod" && find . -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum) | sed "s|^\./|conformance/oracle/|"
  echo go.mod
  echo go.sum
  for d in $(cd "$repo" && go list -deps -f '{{if and .Module (eq .Module.Path "github.com/nodestate/nodestate")}}{{.Dir}}{{end}}' ./podlifecycle/simruntime); do
    (cd "$d" && ls *.go | grep -v '_test\.go$' | sed "s|^|${d#"$repo"/}/|")
  done
}
hash="$(cd "$repo" && sources | LC_ALL=C sort | while read -r f; do printf '%s\n' "$f"; sha256sum < "$f"; done | sha256sum | cut -c1-16)"

root="${NODESTATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodestate}/oracle"
dir="$root/kube-$k8s_version-$hash"

if [[ -x "$dir/oraclenode" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$root"
exec 9>"$root/.lock"
if ! flock -n 9; then
  echo "build-oracle: another build holds $root/.lock; waiting for it" >&2
  flock 9
fi
if [[ -x "$dir/oraclenode" ]]; then
  echo "$dir"
  exit 0
fi

tmp="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
echo "build-oracle: building the oracle node (Kubernetes $k8s_version) into $dir" >&2
start=$SECONDS
(cd "$mod" && go build -ldflags "$ldflags" -o "$tmp/oraclenode" ./cmd/oraclenode)
echo "build-oracle: built in $((SECONDS - start)) s" >&2
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
