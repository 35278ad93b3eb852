package kubeversion

import (
	"errors"
	"strconv"
)

// ErrUnsupportedVersion is matched (errors.Is) by every error of this
// package: a version that is not one of the supported minors, or a string
// that is not a version at all.
var ErrUnsupportedVersion = errors.New("kubeversion: unsupported Kubernetes version")

// ParseError is the error of [Parse] and [Version.UnmarshalText]. It
// unwraps to [ErrUnsupportedVersion].
type ParseError struct {
	// Input is the string that was refused.
	Input string
	// Malformed is true when Input is not of the form 1.N, v1.N, 1.N.P or
	// v1.N.P; false when it is, but N is not a supported minor.
	Malformed bool
	// Minor is N when the form was right, 0 otherwise.
	Minor int
}

// Error says which input was refused and why.
func (e *ParseError) Error() string {
	msg := ErrUnsupportedVersion.Error() + " " + strconv.Quote(e.Input)
	if e.Malformed {
		return msg + ": want 1.N, v1.N, 1.N.P or v1.N.P"
	}
	return msg + ": supported are " + Oldest.String() + " to " + Newest.String()
}

// Unwrap returns [ErrUnsupportedVersion].
func (e *ParseError) Unwrap() error { return ErrUnsupportedVersion }

// ValueError is the error of [Version.Validate]: a Version converted from
// an integer that is none of the constants, such as Version(99) set in an
// Options struct. It unwraps to [ErrUnsupportedVersion]. The packages that
// take a Version in their options wrap it in their own option error, so
// that errors.Is matches both their sentinel and ErrUnsupportedVersion.
type ValueError struct {
	// Version is the refused value.
	Version Version
}

// Error names the refused value and the supported range:
//
//	kubeversion: unsupported Kubernetes version kubeversion.Version(99): supported are 1.33 to 1.37
func (e *ValueError) Error() string {
	return ErrUnsupportedVersion.Error() + " " + e.Version.String() + ": supported are " + Oldest.String() + " to " + Newest.String()
}

// Unwrap returns [ErrUnsupportedVersion].
func (e *ValueError) Unwrap() error { return ErrUnsupportedVersion }
