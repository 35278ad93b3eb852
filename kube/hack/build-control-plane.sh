#!/usr/bin/env bash
# Builds kube-apiserver and etcd from Go modules (the versions pinned in
# tools/go.mod) into a cache outside the clone, keyed by version, and prints
# that directory. A second run with both binaries present builds nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
k8s_version=v1.37.2
etcd_version=v3.7.0
cache_root="${NODESTATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodestate}"
dir="$cache_root/control-plane/kube-apiserver-$k8s_version-etcd-$etcd_version"

if [[ -x "$dir/kube-apiserver" && -x "$dir/etcd" ]]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"
cd "$here/tools"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
echo "building kube-apiserver $k8s_version and etcd $etcd_version into $dir" >&2
go build -trimpath -o "$dir/kube-apiserver.tmp" \
  -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
  k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -o "$dir/etcd.tmp" -ldflags "-s -w" go.etcd.io/etcd/server/v3
mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
mv "$dir/etcd.tmp" "$dir/etcd"
echo "$dir"
