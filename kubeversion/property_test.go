package kubeversion_test

import (
	"errors"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/kubeversion"
)

// TestPropertyRoundTrip: every supported Version reads back from its
// String, with or without a v and with any patch.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "v")
		s := v.String()
		if rapid.Bool().Draw(t, "patch") {
			s += "." + strconv.Itoa(rapid.IntRange(0, 999).Draw(t, "p"))
		}
		if rapid.Bool().Draw(t, "v-prefix") {
			s = "v" + s
		}
		got, err := kubeversion.Parse(s)
		if err != nil || got != v {
			t.Fatalf("Parse(%q) = %v, %v; want %v", s, got, err, v)
		}
		if b, err := v.MarshalText(); err != nil || string(b) != v.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", v, b, err)
		}
	})
}

// TestPropertyUnsupportedMinor: a well-formed version of a minor outside
// 33..37 is refused as unsupported, not malformed, with its minor.
func TestPropertyUnsupportedMinor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.OneOf(rapid.IntRange(0, 32), rapid.IntRange(38, 999999)).Draw(t, "minor")
		s := "1." + strconv.Itoa(m)
		_, err := kubeversion.Parse(s)
		var pe *kubeversion.ParseError
		if !errors.Is(err, kubeversion.ErrUnsupportedVersion) || !errors.As(err, &pe) || pe.Malformed || pe.Minor != m {
			t.Fatalf("Parse(%q) error = %v; want unsupported minor %d", s, err, m)
		}
	})
}

// TestPropertyOrder: AtLeast is the order of the minors, and Supported
// lists them oldest first without gaps.
func TestPropertyOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		all := kubeversion.Supported()
		i := rapid.IntRange(0, len(all)-1).Draw(t, "i")
		j := rapid.IntRange(0, len(all)-1).Draw(t, "j")
		if all[i].AtLeast(all[j]) != (i >= j) {
			t.Fatalf("%v.AtLeast(%v) = %v at positions %d, %d", all[i], all[j], all[i].AtLeast(all[j]), i, j)
		}
		if all[i].Minor() != all[0].Minor()+i {
			t.Fatalf("Supported()[%d] = %v, not minor %d", i, all[i], all[0].Minor()+i)
		}
	})
}
