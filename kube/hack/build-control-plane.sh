#!/usr/bin/env bash
# Builds the control plane the kube module's integration tests start: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl, from Go
# modules (the versions pinned in tools/go.mod), into a cache outside the
# clone keyed by every version, and prints that directory on stdout. A run
# that finds all binaries there builds nothing.
#
# Two runs at once (two test binaries, two checkouts) do not race: the build
# holds an flock on a file in the cache, and the second run waits for it and
# then finds the binaries. The binaries are built into a temporary directory
# beside the final one, which is renamed into place only when all of them are
# there, so the directory exists complete or not at all.
#
# The Go build cache is the user's own, so the packages that kube-apiserver
# and the other binaries share are compiled once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
k8s_version=v1.37.2
etcd_version=v3.7.0
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)
root="${NODESTATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodestate}/control-plane"
dir="$root/kube-$k8s_version-etcd-$etcd_version-apiserver-kcm-sched-kubectl"
# The cache of the builder before it built the controller manager, the
# scheduler and kubectl: same versions, so its two binaries are reused.
previous="$root/kube-apiserver-$k8s_version-etcd-$etcd_version"

complete() {
  local b
  for b in "${bins[@]}"; do
    [[ -x "$1/$b" ]] || return 1
  done
}

if complete "$dir"; then
  echo "$dir"
  exit 0
fi

mkdir -p "$root"
exec 9>"$root/.lock"
if ! flock -n 9; then
  echo "build-control-plane: another build holds $root/.lock; waiting for it" >&2
  flock 9
fi
if complete "$dir"; then
  echo "$dir"
  exit 0
fi

tmp="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cd "$here/tools"
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

# One go build for every binary still missing: the compiler works through the
# packages they share once, and links each binary while others compile. The
# -X flags name component-base symbols that etcd does not link; the linker
# ignores them there. Not -trimpath: without it the packages these builds
# share with the conformance module's vet and tests and the kube module's vet
# (k8s.io/api, apimachinery, client-go, component-base, the kubelet's ...)
# compile once into the Go build cache on a cold machine, instead of twice.
# That sharing also needs every module of the repository to select the same
# versions of them (see the requirements of ../../go.mod and its neighbours).
echo "build-control-plane: building Kubernetes $k8s_version and etcd $etcd_version into $dir" >&2
for b in etcd kube-apiserver; do
  if [[ -x "$previous/$b" ]]; then
    cp "$previous/$b" "$tmp/$b"
    echo "build-control-plane: $b reused from $previous" >&2
  fi
done
pkgs=()
[[ -x "$tmp/etcd" ]] || pkgs+=(go.etcd.io/etcd/server/v3)
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [[ -x "$tmp/$b" ]] || pkgs+=("k8s.io/kubernetes/cmd/$b")
done
start=$SECONDS
echo "build-control-plane: building ${pkgs[*]} ..." >&2
mkdir "$tmp/out"
go build -o "$tmp/out/" -ldflags "$k8s_ldflags" "${pkgs[@]}"
# go build names etcd's binary after the last element of its package path
# without the major version suffix.
[[ ! -e "$tmp/out/server" ]] || mv "$tmp/out/server" "$tmp/out/etcd"
mv "$tmp/out/"* "$tmp/"
rmdir "$tmp/out"
echo "build-control-plane: built in $((SECONDS - start)) s" >&2
complete "$tmp"
rm -rf "$dir" # an incomplete directory left by an older builder
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
