package rapidcheck

import (
	"testing"

	_ "pgregory.net/rapid" // registers -rapid.checks
)

func TestMinChecks(t *testing.T) {
	t.Setenv("RAPID_CHECKS", "")
	if err := MinChecks(1234); err != nil {
		t.Fatal(err)
	}
	want := 1234
	if testing.Short() {
		want /= 5 // rapid runs a fifth under -short
	}
	if Checks() != want {
		t.Fatalf("Checks() = %d, want %d", Checks(), want)
	}
	t.Setenv("RAPID_CHECKS", "7")
	if err := MinChecks(99); err != nil || Checks() != want {
		t.Fatalf("RAPID_CHECKS set: the flag is left alone, got %d (%v)", Checks(), err)
	}
}
