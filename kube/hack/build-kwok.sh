#!/usr/bin/env bash
# Builds KWOK (sigs.k8s.io/kwok) from its Go module into a cache outside the
# clone keyed by its version, with the default ("fast") stages kwokctl would
# give it, and prints that directory on stdout: kwok (the binary) and
# stages-fast.yaml (node-initialize, heartbeat-with-lease, pod-ready,
# pod-complete, pod-delete). A run that finds both there builds nothing. For
# make bench-fleet, which runs KWOK beside a nodestate fleet.
set -euo pipefail
kwok_version=v0.8.0
root="${NODESTATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodestate}/kwok"
dir="$root/kwok-$kwok_version"

if [[ -x "$dir/kwok" && -s "$dir/stages-fast.yaml" ]]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9
if [[ -x "$dir/kwok" && -s "$dir/stages-fast.yaml" ]]; then
  echo "$dir"
  exit 0
fi
tmp="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
(
  cd "$tmp"
  go mod init kwokbuild >/dev/null 2>&1
  go get -tool "sigs.k8s.io/kwok/cmd/kwok@$kwok_version" >&2
  start=$(date +%s)
  go build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok
  echo "build-kwok: kwok $kwok_version built in $(( $(date +%s) - start )) s" >&2
  stages="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$kwok_version/kustomize/stage"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [[ -s "$stages/$f" ]] || { echo "build-kwok: no stage file $stages/$f" >&2; ls -R "$stages" >&2; exit 1; }
    echo "---"
    cat "$stages/$f"
  done > "$tmp/stages-fast.yaml"
  rm -f go.mod go.sum
)
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
