# The commands the README names. Every Go module of the repository (the root
# one and the nested ones: kube/, conformance/, its driver for the older
# minors conformance/versions/ and their generated modules
# conformance/versions/v1.*/) is covered.

# The tools module under kube/hack builds the control plane (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl); it is
# built by kube/hack/build-control-plane.sh, never linted or tested.
MODULES := $(filter-out %/hack/tools/,$(dir $(shell git ls-files --cached --others --exclude-standard -- 'go.mod' '*/go.mod')))
# The generated modules of the older minors are not vetted or staticchecked:
# their main.go is a copy of conformance/cmd/upstream, which is (in
# conformance/), their shims are compiled by conformance/versions, and each
# pass would analyse that release's whole kubelet graph again (3.5 minutes of
# two cores per release for vet alone, caches warm).
LINT_MODULES := $(filter-out conformance/versions/v1.%/,$(MODULES))
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 5s

SHELL := /bin/bash

.PHONY: test test-short lint fuzz example conformance oracle mutation bench-fleet

# All tests of all modules, with the race detector (not for conformance/ and
# conformance/versions/..., whose single-goroutine comparisons of pure
# functions gain nothing from it and whose upstream packages would compile
# twice; the modules of the older minors have no tests, their commands are
# built and run by conformance/versions; but for conformance/oracle/, whose
# CRI runtime serves the kubelet from many goroutines), including the
# integration tests of kube/ against a real control plane (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl, built
# from Go modules into a cache outside the clone on first use: about 13
# minutes of two cores once) and the oracle node beside it (the real kubelet,
# built by kube/hack/build-oracle.sh into the same cache), which
# conformance/compare runs beside a kube.Node: its CI subset of the oracle
# comparison prints its report (make oracle runs it all). Without go test's
# own vet pass: go vet runs in lint, over the same sources, and go test's
# would analyse every dependency again for each build
# configuration (the race-instrumented one here, the fuzz-instrumented one in
# fuzz). The conformance modules get 80 minutes: conformance/versions builds
# the four older releases' commands before its tests start, 4 to 20 minutes
# each on a cold two-core machine, and go test's limit covers that too. The
# two conformance modules run verbosely into a log: when they pass, their
# report (what make conformance prints) is shown, so CI runs them once; when
# they fail, the whole log is.
test:
	@set -e; export NODESTATE_CONTROL_PLANE="$$(bash kube/hack/build-control-plane.sh)"; \
	export NODESTATE_ORACLE="$$(bash kube/hack/build-oracle.sh)"; \
	log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for m in $(MODULES); do \
	  echo "== go test $$(case $$m in conformance/oracle/) echo -race;; conformance/*) ;; *) echo -race;; esac) ($$m) $$(date -u +%T)"; \
	  case $$m in \
	  conformance/|conformance/versions/) \
	    if (cd $$m && go test -vet=off -count=1 -timeout 80m -v ./...) > $$log 2>&1; then \
	      sed -n '/^conformance against/,$$p' $$log; \
	    else cat $$log; exit 1; fi;; \
	  conformance/oracle/) (cd $$m && go test -race -vet=off -count=1 ./...);; \
	  conformance/compare/) \
	    if (cd $$m && go test -vet=off -count=1 -timeout 30m -v ./...) > $$log 2>&1; then \
	      sed -n '/oracle comparison:/,/ oracle node: RSS/p' $$log; \
	    else cat $$log; exit 1; fi;; \
	  conformance/*) (cd $$m && go test -vet=off -count=1 ./...);; \
	  *) (cd $$m && go test -race -vet=off -count=1 -timeout 30m ./...);; \
	  esac; \
	done

# The quick variant: every module's tests without the real API server.
test-short:
	@set -e; for m in $(MODULES); do echo "== go test -short ($$m)"; (cd $$m && go test -short -count=1 ./...); done

# gofmt, go vet and staticcheck over every module; the modules build the
# dependencies they share with the control plane at the same versions (so a
# cold build compiles them once); every spec reference resolves
# in docs/spec/; the generated no-panic test is current; the generated files
# of the older minors' conformance modules are current.
lint:
	@bash kube/hack/check-aligned.sh
	@go run ./internal/cmd/specrefs
	@go run ./internal/cmd/conventions . ./kube ./vk
	@tmp=$$(mktemp); trap 'rm -f $$tmp' EXIT; go run ./internal/cmd/apigen -o $$tmp && \
	  diff -u internal/apitest/zz_generated_test.go $$tmp || { echo "internal/apitest/zz_generated_test.go is stale: run go generate ./internal/apitest"; exit 1; }
	@go run ./internal/cmd/genversions -check
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@set -e; for m in $(LINT_MODULES); do echo "== go vet ($$m) $$(date -u +%T)"; (cd $$m && go vet ./...); \
	  echo "== staticcheck ($$m) $$(date -u +%T)"; (cd $$m && go run $(STATICCHECK) ./...); done

# Each fuzz target of the root module for FUZZTIME. The targets are read off the
# sources (a func FuzzX in a package's _test.go files) rather than from
# go test -list, which would build and run every package's test binary once
# more, in a configuration nothing else uses. Go 1.26's fuzz coordinator
# can end a duration-bounded run with a spurious "context deadline exceeded"
# (go.dev/issue/75804, fixed in Go 1.27); such a run wrote no failing input, so
# it is run again, up to twice. A real failure writes its input under
# testdata/fuzz and fails at once.
fuzz:
	@set -e; for pd in $$(go list -f '{{.ImportPath}}={{.Dir}}' ./...); do \
	  pkg=$${pd%%=*}; \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $${pd#*=}/*_test.go 2>/dev/null); do \
	    dir=$${pd#*=}/testdata/fuzz/$$f; \
	    for try in 1 2 3; do \
	      echo "== fuzz $$pkg $$f ($(FUZZTIME), try $$try)"; \
	      before=$$(ls $$dir 2>/dev/null | wc -l); \
	      if go test -vet=off -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg > /tmp/nodestate-fuzz.log 2>&1; then cat /tmp/nodestate-fuzz.log; break; fi; \
	      cat /tmp/nodestate-fuzz.log; \
	      after=$$(ls $$dir 2>/dev/null | wc -l); \
	      if [ "$$after" != "$$before" ] || ! grep -q 'context deadline exceeded' /tmp/nodestate-fuzz.log || [ $$try = 3 ]; then exit 1; fi; \
	      echo "fuzz $$f: coordinator deadline race, no failing input written; running again"; \
	    done; \
	  done; \
	done

# Mutation testing of podphase, containerstate, statussync, events,
# nodecondition, podlifecycle and kube (its own module, tested from kube/
# without its integration tests): gremlins v0.6.0 (installed into the user
# cache on first use) lists the mutants, each runs against its package's
# go test -short through an overlay, one package at a time; writes
# docs/mutation.md and keeps each package's outcome in docs/mutation/. Not
# part of test: most mutants run in one mutant-schema build per package, so
# a package takes 2 to 15 minutes on two cores, kube up to an hour.
# PKGS="podphase containerstate" runs only those; verdicts for equivalent
# mutants are in docs/mutation-verdicts.txt.
mutation:
	go run ./internal/cmd/mutation $(PKGS)

# The main example.
example:
	go run ./examples/nodeagent

# The conformance suite's report: inputs and mismatches per property against
# upstream Kubernetes, a section per release: v1.37.2 in-process
# (conformance/), then v1.33.13 to v1.36.3 through their commands
# (conformance/versions/, which builds each release's command once, one after
# the other).
conformance:
	@set -o pipefail; cd conformance && go test -vet=off -count=1 -v . | sed -n '/^conformance against/,$$p'
	@set -o pipefail; cd conformance/versions && go test -vet=off -count=1 -timeout 80m -v . | sed -n '/^conformance against/,$$p'

# The oracle comparison (conformance/compare): the real kubelet of v1.37.2
# (the oracle node) and a nodestate kube.Node on one control plane, every
# named workload and ORACLE_GENERATED generated pods created on both, every
# pod status, event and the Node objects compared; prints the report and
# fails on an undocumented difference (docs/faithfulness.md). make test runs
# its CI subset (TestOracle). About 6 minutes: the longest workload follows
# a crash loop over five restarts.
ORACLE_GENERATED ?= 200
ORACLE_SEED ?= 1
oracle:
	@set -e; export NODESTATE_CONTROL_PLANE="$$(bash kube/hack/build-control-plane.sh)"; \
	export NODESTATE_ORACLE="$$(bash kube/hack/build-oracle.sh)"; \
	cd conformance/compare && go run ./cmd/oraclecompare -generated $(ORACLE_GENERATED) -seed $(ORACLE_SEED)

# A nodestate fleet beside KWOK v0.8.0 (built from its Go module with its
# default stages into ~/.cache/nodestate/kwok on first use, about 90 s of two
# cores) and beside 10 nodes of the real kubelet's code (the oracle node),
# each on a control plane of its own with the controller manager and
# scheduler at --kube-api-qps 500: BENCH_NODES nodes, Deployments totalling
# each of BENCH_PODS pods (an entry NODESxPODS sets its own nodes, as in
# BENCH_PODS=1000x10000,100x10000), plain and with an init container and a
# readiness probe (BENCH_WORKLOADS). Writes BENCH_OUT (docs/bench/fleet.md),
# with the fleet's CPU and heap profiles beside it (not committed). Not part
# of test: the full sizes take tens of minutes. docs/bench/fleet-large.md is
# BENCH_PODS=1000x10000,100x10000 BENCH_WORKLOADS=plain.
BENCH_NODES ?= 100
BENCH_PODS ?= 1000,5000
BENCH_WORKLOADS ?= plain,init-probe
BENCH_OUT ?= docs/bench/fleet.md
bench-fleet:
	@set -e; export NODESTATE_CONTROL_PLANE="$$(bash kube/hack/build-control-plane.sh)"; \
	export NODESTATE_KWOK="$$(bash kube/hack/build-kwok.sh)"; export NODESTATE_ORACLE="$$(bash kube/hack/build-oracle.sh)"; \
	mkdir -p docs/bench; \
	cd kube && go run ./internal/cmd/benchfleet -nodes $(BENCH_NODES) -pods $(BENCH_PODS) -workloads $(BENCH_WORKLOADS) -out ../$(BENCH_OUT)
