package kubeversion

import (
	"strconv"
	"strings"
)

// Version is a supported Kubernetes minor. The zero value is [Default]
// (1.37). A Version converted from an integer other than the constants' is
// not valid: [Version.Valid] reports false, [Version.Validate] returns a
// [*ValueError], [Version.String] shows the number, [Version.MarshalText]
// refuses it, and every other method treats it as Default.
type Version uint8

// The supported minors. The constants count back from the newest, so that
// the zero value is the default; their values are not minors.
const (
	V1_37 Version = iota
	V1_36
	V1_35
	V1_34
	V1_33

	count = iota
)

const (
	// Default is the version nodestate follows when none is given: the
	// zero Version.
	Default = V1_37
	// Newest and Oldest bound the supported minors.
	Newest = V1_37
	Oldest = V1_33
)

// newestMinor is the minor of V1_37, the constant whose value is 0.
const newestMinor = 37

// releases are the upstream releases each profile was confirmed against.
var releases = [count]string{
	V1_37: "v1.37.2",
	V1_36: "v1.36.3",
	V1_35: "v1.35.4",
	V1_34: "v1.34.4",
	V1_33: "v1.33.13",
}

// Supported returns the supported versions, oldest first. The slice is the
// caller's.
func Supported() []Version {
	vs := make([]Version, 0, count)
	for v := Oldest; ; v-- {
		vs = append(vs, v)
		if v == Newest {
			return vs
		}
	}
}

// Valid reports whether v is one of the constants.
func (v Version) Valid() bool { return v < count }

// Validate returns nil for one of the constants and a [*ValueError]
// (matching [ErrUnsupportedVersion]) for any other value. The constructors
// of the packages that take a Version in their options call it, so that an
// out-of-range Version is refused rather than silently treated as Default.
func (v Version) Validate() error {
	if !v.Valid() {
		return &ValueError{Version: v}
	}
	return nil
}

// norm maps an invalid v to Default.
func (v Version) norm() Version {
	if !v.Valid() {
		return Default
	}
	return v
}

// Minor returns the minor number: 33 for V1_33.
func (v Version) Minor() int { return newestMinor - int(v.norm()) }

// AtLeast reports whether v is w or a newer minor.
func (v Version) AtLeast(w Version) bool { return v.Minor() >= w.Minor() }

// Release returns the upstream release the profile of v follows, for
// example "v1.34.4".
func (v Version) Release() string { return releases[v.norm()] }

// String returns "1.N", the form [Parse] reads back. An invalid v gives
// "kubeversion.Version(N)" with its numeric value.
func (v Version) String() string {
	if !v.Valid() {
		return "kubeversion.Version(" + strconv.Itoa(int(v)) + ")"
	}
	return "1." + strconv.Itoa(v.Minor())
}

// MarshalText returns [Version.String]; an invalid v is refused with a
// [*ParseError].
func (v Version) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, &ParseError{Input: v.String(), Malformed: true}
	}
	return []byte(v.String()), nil
}

// UnmarshalText sets v from text as [Parse] reads it, so that a Version
// works with flag.TextVar and encoding/json. On error v is unchanged.
func (v *Version) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Parse reads a Kubernetes version: "1.34", "v1.34", "1.34.4" or
// "v1.34.4" (any patch). Anything else, or a minor other than 1.33 to 1.37,
// is refused with a [*ParseError] matching [ErrUnsupportedVersion]. Vendor
// suffixes ("v1.34.4-gke.100") are refused too: strip them first.
func Parse(s string) (Version, error) {
	rest := strings.TrimPrefix(s, "v")
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "1" {
		return Default, &ParseError{Input: s, Malformed: true}
	}
	minor, ok := number(parts[1])
	if !ok {
		return Default, &ParseError{Input: s, Malformed: true}
	}
	if len(parts) == 3 {
		if _, ok := number(parts[2]); !ok {
			return Default, &ParseError{Input: s, Malformed: true}
		}
	}
	if minor < Oldest.Minor() || minor > Newest.Minor() {
		return Default, &ParseError{Input: s, Minor: minor}
	}
	return Version(newestMinor - minor), nil
}

// number reads a decimal number without sign or leading zeros, of at most
// nine digits.
func number(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
