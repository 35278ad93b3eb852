# The commands the README names. Every Go module of the repository (the root
# one and the nested ones under examples/ and conformance/) is covered.

MODULES := $(dir $(shell git ls-files --cached --others --exclude-standard -- 'go.mod' '*/go.mod'))
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 5s

.PHONY: test lint fuzz example

# All tests of all modules, with the race detector.
test:
	@set -e; for m in $(MODULES); do echo "== go test -race ($$m)"; (cd $$m && go test -race -count=1 ./...); done

# gofmt, go vet and staticcheck over every module.
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@set -e; for m in $(MODULES); do echo "== vet and staticcheck ($$m)"; (cd $$m && go vet ./... && go run $(STATICCHECK) ./...); done

# Each fuzz target of the root module for FUZZTIME.
fuzz:
	@set -e; for pkg in $$(go list ./...); do \
	  for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== fuzz $$pkg $$f ($(FUZZTIME))"; go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# The main example.
example:
	go run ./examples/crashloop
