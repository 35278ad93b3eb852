package kubeversion_test

import (
	"encoding/json"
	"errors"
	"flag"
	"testing"

	"github.com/nodestate/nodestate/kubeversion"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		want   kubeversion.Version
		reason string
	}{
		{"1.33", kubeversion.V1_33, "oldest supported minor"},
		{"v1.34", kubeversion.V1_34, "a leading v, as kubectl version prints it"},
		{"1.34.4", kubeversion.V1_34, "the reference patch"},
		{"v1.34.4", kubeversion.V1_34, "the reference release with a v"},
		{"1.35.0", kubeversion.V1_35, "any patch of a supported minor"},
		{"v1.36.3", kubeversion.V1_36, "the 1.36 reference release"},
		{"1.37", kubeversion.V1_37, "newest supported minor"},
		{"v1.37.2", kubeversion.Default, "the default's reference release"},
	}
	for _, tc := range tests {
		got, err := kubeversion.Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v (%s)", tc.in, got, err, tc.want, tc.reason)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		in        string
		malformed bool
		minor     int
		reason    string
	}{
		{"1.32", false, 32, "older than the oldest profile"},
		{"v1.38.0", false, 38, "newer than the newest profile"},
		{"1.0", false, 0, "well formed, minor 0"},
		{"", true, 0, "empty"},
		{"1", true, 0, "no minor"},
		{"1.", true, 0, "empty minor"},
		{"2.34", true, 0, "major 2"},
		{"1.34.4.1", true, 0, "four parts"},
		{"V1.34", true, 0, "capital V"},
		{"vv1.34", true, 0, "two v"},
		{" 1.34", true, 0, "leading space"},
		{"1.034", true, 0, "leading zero in the minor"},
		{"1.34.04", true, 0, "leading zero in the patch"},
		{"1.+34", true, 0, "a sign"},
		{"1.34.", true, 0, "empty patch"},
		{"v1.34.4-gke.100", true, 0, "a vendor suffix"},
		{"1.9999999999", true, 0, "a minor too long to be one"},
		{"garbage", true, 0, "not a version"},
	}
	for _, tc := range tests {
		got, err := kubeversion.Parse(tc.in)
		var pe *kubeversion.ParseError
		if !errors.Is(err, kubeversion.ErrUnsupportedVersion) || !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, %v; want a *ParseError matching ErrUnsupportedVersion (%s)", tc.in, got, err, tc.reason)
			continue
		}
		if pe.Input != tc.in || pe.Malformed != tc.malformed || pe.Minor != tc.minor {
			t.Errorf("Parse(%q) error = %+v; want Malformed %v, Minor %d (%s)", tc.in, *pe, tc.malformed, tc.minor, tc.reason)
		}
		if got != kubeversion.Default {
			t.Errorf("Parse(%q) = %v with an error; want the zero Version", tc.in, got)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1.32", `kubeversion: unsupported Kubernetes version "1.32": supported are 1.33 to 1.37`},
		{"x", `kubeversion: unsupported Kubernetes version "x": want 1.N, v1.N, 1.N.P or v1.N.P`},
	}
	for _, tc := range tests {
		_, err := kubeversion.Parse(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %v; want %s", tc.in, err, tc.want)
		}
	}
}

func TestZeroValueIsDefault(t *testing.T) {
	var v kubeversion.Version
	if v != kubeversion.Default || v.String() != "1.37" || v.Minor() != 37 || v.Release() != "v1.37.2" {
		t.Errorf("zero Version = %v (minor %d, release %s); want 1.37, v1.37.2", v, v.Minor(), v.Release())
	}
}

func TestVersionMethods(t *testing.T) {
	tests := []struct {
		v       kubeversion.Version
		str     string
		minor   int
		release string
	}{
		{kubeversion.V1_33, "1.33", 33, "v1.33.13"},
		{kubeversion.V1_34, "1.34", 34, "v1.34.4"},
		{kubeversion.V1_35, "1.35", 35, "v1.35.4"},
		{kubeversion.V1_36, "1.36", 36, "v1.36.3"},
		{kubeversion.V1_37, "1.37", 37, "v1.37.2"},
	}
	for _, tc := range tests {
		if !tc.v.Valid() || tc.v.String() != tc.str || tc.v.Minor() != tc.minor || tc.v.Release() != tc.release {
			t.Errorf("%v: Valid %v String %q Minor %d Release %q; want true %q %d %q",
				tc.v, tc.v.Valid(), tc.v.String(), tc.v.Minor(), tc.v.Release(), tc.str, tc.minor, tc.release)
		}
	}
}

func TestSupported(t *testing.T) {
	got := kubeversion.Supported()
	want := []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_34, kubeversion.V1_35, kubeversion.V1_36, kubeversion.V1_37}
	if len(got) != len(want) {
		t.Fatalf("Supported() = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Supported() = %v; want %v", got, want)
		}
	}
	got[0] = kubeversion.V1_37
	if kubeversion.Supported()[0] != kubeversion.V1_33 {
		t.Error("Supported() returned a shared slice")
	}
	if kubeversion.Supported()[0] != kubeversion.Oldest || got[len(got)-1] != kubeversion.Newest {
		t.Error("Oldest and Newest do not bound Supported()")
	}
}

func TestInvalidVersion(t *testing.T) {
	v := kubeversion.Version(9)
	if v.Valid() || v.String() != "kubeversion.Version(9)" {
		t.Errorf("Version(9): Valid %v String %q; want false, kubeversion.Version(9)", v.Valid(), v.String())
	}
	if v.Minor() != 37 || v.Release() != "v1.37.2" || !v.AtLeast(kubeversion.V1_37) {
		t.Errorf("Version(9) is not treated as Default: Minor %d Release %s", v.Minor(), v.Release())
	}
	if _, err := v.MarshalText(); !errors.Is(err, kubeversion.ErrUnsupportedVersion) {
		t.Errorf("Version(9).MarshalText error = %v; want ErrUnsupportedVersion", err)
	}
}

func TestAtLeast(t *testing.T) {
	for _, v := range kubeversion.Supported() {
		for _, w := range kubeversion.Supported() {
			if got, want := v.AtLeast(w), v.Minor() >= w.Minor(); got != want {
				t.Errorf("%v.AtLeast(%v) = %v; want %v", v, w, got, want)
			}
		}
	}
}

func TestText(t *testing.T) {
	var cfg struct{ V kubeversion.Version }
	if err := json.Unmarshal([]byte(`{"V":"v1.34.4"}`), &cfg); err != nil || cfg.V != kubeversion.V1_34 {
		t.Fatalf("json.Unmarshal = %v, %v; want 1.34", cfg.V, err)
	}
	b, err := json.Marshal(cfg)
	if err != nil || string(b) != `{"V":"1.34"}` {
		t.Fatalf("json.Marshal = %s, %v", b, err)
	}
	v := kubeversion.V1_35
	if err := v.UnmarshalText([]byte("1.38")); !errors.Is(err, kubeversion.ErrUnsupportedVersion) || v != kubeversion.V1_35 {
		t.Errorf("UnmarshalText(1.38) = %v, left %v; want ErrUnsupportedVersion and 1.35 unchanged", err, v)
	}

	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var fv kubeversion.Version
	fs.TextVar(&fv, "kubernetes-version", kubeversion.Default, "")
	if err := fs.Parse([]string{"--kubernetes-version", "1.33"}); err != nil || fv != kubeversion.V1_33 {
		t.Errorf("flag = %v, %v; want 1.33", fv, err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		v      kubeversion.Version
		ok     bool
		reason string
	}{
		{kubeversion.Default, true, "the zero Version is 1.37"},
		{kubeversion.V1_33, true, "the oldest constant"},
		{kubeversion.V1_36, true, "a constant in the middle"},
		{kubeversion.Version(5), false, "invalid Version refused: one past the oldest constant"},
		{kubeversion.Version(99), false, "invalid Version refused: far out of range"},
		{kubeversion.Version(255), false, "invalid Version refused: the largest value"},
	}
	for _, tc := range tests {
		err := tc.v.Validate()
		if tc.ok {
			if err != nil {
				t.Errorf("%v.Validate() = %v; want nil (%s)", tc.v, err, tc.reason)
			}
			continue
		}
		var ve *kubeversion.ValueError
		if !errors.Is(err, kubeversion.ErrUnsupportedVersion) || !errors.As(err, &ve) || ve.Version != tc.v {
			t.Errorf("%v.Validate() = %v; want a *ValueError for it matching ErrUnsupportedVersion (%s)", tc.v, err, tc.reason)
		}
	}
	for i := 0; i <= 255; i++ {
		v := kubeversion.Version(i)
		if (v.Validate() == nil) != v.Valid() {
			t.Errorf("Version(%d): Validate() = %v but Valid() = %v", i, v.Validate(), v.Valid())
		}
	}
	want := "kubeversion: unsupported Kubernetes version kubeversion.Version(99): supported are 1.33 to 1.37"
	if err := kubeversion.Version(99).Validate(); err == nil || err.Error() != want {
		t.Errorf("Version(99).Validate() = %v; want %s", err, want)
	}
}
