package kubeversion_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nodestate/nodestate/kubeversion"
)

// FuzzParse checks, for any string, that Parse accepts it exactly when it
// is 1.N, v1.N, 1.N.P or v1.N.P with N from 33 to 37 (decimal, no sign, no
// leading zero), that an accepted string reads back through String, and
// that a refused one gives a *ParseError naming it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.33", "v1.34", "1.35.4", "v1.37.2", "1.32", "1.38", "", "v", "1.034", "1.34.x", "2.34", "v1.36.3-rc.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := kubeversion.Parse(s)
		minor, accept := reference(s)
		if err != nil {
			var pe *kubeversion.ParseError
			if !errors.Is(err, kubeversion.ErrUnsupportedVersion) || !errors.As(err, &pe) || pe.Input != s {
				t.Fatalf("Parse(%q) error %v: not a *ParseError for the input matching ErrUnsupportedVersion", s, err)
			}
			if accept {
				t.Fatalf("Parse(%q) refused a supported version: %v", s, err)
			}
			if v != kubeversion.Default {
				t.Fatalf("Parse(%q) = %v with an error", s, v)
			}
			return
		}
		if !accept || !v.Valid() || v.Minor() != minor {
			t.Fatalf("Parse(%q) = %v (minor %d); reference accepts %v minor %d", s, v, v.Minor(), accept, minor)
		}
		if back, err := kubeversion.Parse(v.String()); err != nil || back != v {
			t.Fatalf("Parse(%q) = %v, but Parse(%q) = %v, %v", s, v, v.String(), back, err)
		}
	})
}

// reference is a second, plainer reading of the accepted form.
func reference(s string) (int, bool) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.Split(s, ".")
	if (len(parts) != 2 && len(parts) != 3) || parts[0] != "1" {
		return 0, false
	}
	for _, p := range parts[1:] {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" || (len(p) > 1 && p[0] == '0') {
			return 0, false
		}
	}
	n, err := strconv.Atoi(parts[1])
	return n, err == nil && n >= 33 && n <= 37
}
