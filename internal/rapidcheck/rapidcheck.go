// Package rapidcheck sets how many cases the rapid properties of a test
// binary run, for the TestMain functions of nodestate's packages.
package rapidcheck

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// MinChecks makes each rapid property of the test binary run n generated
// cases, unless -rapid.checks or RAPID_CHECKS chose a number. Call it from
// TestMain after flag.Parse; it fails only if rapid's flag is not
// registered (the binary does not import rapid).
func MinChecks(n int) error {
	if os.Getenv("RAPID_CHECKS") != "" {
		return nil
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if explicit {
		return nil
	}
	return flag.Set("rapid.checks", strconv.Itoa(n))
}

// Checks returns the number of cases each property runs (0 if rapid's flag
// is not registered): the flag's value, a fifth of it under -short as rapid
// does.
func Checks() int {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return 0
	}
	n, _ := strconv.Atoi(f.Value.String())
	if testing.Short() {
		n /= 5
	}
	return n
}
