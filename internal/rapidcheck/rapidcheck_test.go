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
	if Checks() != 1234 {
		t.Fatalf("Checks() = %d, want 1234", Checks())
	}
	t.Setenv("RAPID_CHECKS", "7")
	if err := MinChecks(99); err != nil || Checks() != 1234 {
		t.Fatalf("RAPID_CHECKS set: the flag is left alone, got %d (%v)", Checks(), err)
	}
}
