#!/usr/bin/env bash
# Checks that every module of the repository builds the modules it shares with
# the control-plane tools module (kube/hack/tools) at the same versions. The
# Go build cache reuses a compiled package only when all its dependencies are
# identical, so one differing version of a module low in the graph (go-logr,
# k8s.io/utils, golang.org/x/time) makes a cold CI compile k8s.io/api,
# client-go and the Kubernetes packages twice: once for the conformance and
# kube modules, once for the control plane.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
graph() { go list -deps -test -f '{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' "$@" | sort -u; }
(cd kube/hack/tools && graph go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl) > "$tmp/tools"
status=0
for m in . kube conformance conformance/oracle conformance/compare; do
  (cd "$m" && graph ./...) > "$tmp/mod"
  if diff=$(join "$tmp/mod" "$tmp/tools" | awk '$2 != $3'); [[ -n "$diff" ]]; then
    echo "check-aligned: $m builds these modules at other versions than kube/hack/tools (module, $m, tools):" >&2
    echo "$diff" >&2
    status=1
  fi
done
exit $status
