// Package apitest holds the generated test that calls every exported function
// and method of nodestate's packages with zero values and nils, on zero, new,
// nil and constructed receivers, and fails on any panic (docs/conventions.md,
// section 2). zz_generated_test.go is written by internal/cmd/apigen; run
// go generate ./internal/apitest after changing an exported API. make lint
// fails when the file is stale.
//
// knownPanics in internal/cmd/apigen lists the calls that panic today; the
// test skips them. go test ./internal/apitest -apitest.known runs them and
// fails on each entry that no longer panics, so that the list can shrink as
// fixes land.
package apitest

//go:generate go run ../cmd/apigen -o zz_generated_test.go
