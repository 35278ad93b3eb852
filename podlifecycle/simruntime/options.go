package simruntime

import "strings"

// Scheme starts every container ID of the simulated runtime: IDs are
// "sim://<container>-<n>", or "sim://<token>-<container>-<n>" with
// Options.Token.
const Scheme = "sim://"

// Version is the simulated runtime's version, and RuntimeVersion what a
// node running it reports as its containerRuntimeVersion: the kubelet
// writes "<runtime name>://<version>" as the runtime names itself, and the
// runtime name is the scheme of its container IDs.
const (
	Version        = "1.0.0"
	RuntimeVersion = Scheme + Version
)

// Options configures a Runtime. Start from DefaultOptions; the zero value
// is valid too (no token, no IP, images of 0 bytes).
type Options struct {
	// Token goes into every container ID ("sim://<token>-app-1"), so that
	// a runtime made again for the same pod (a node started again, whose
	// new runtime counts from 1) never reports the ID of an instance an
	// API server already shows. Letters, digits and "-" only; empty puts
	// none in.
	Token string
	// IP is the pod IP a ready sandbox reports; empty reports none, and a
	// runner's address allocator gives the pod its IP (podrunner does).
	// A host-network pod's sandbox never reports one.
	IP string
	// ImageSize is the size in bytes every successful pull reports (the
	// Pulled event's "Image size: <n> bytes"). It must not be negative.
	ImageSize int64
}

// DefaultOptions returns no token, no IP and images of 1 MiB.
func DefaultOptions() Options { return Options{ImageSize: 1 << 20} }

func (o Options) validate() error {
	for _, r := range o.Token {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return &OptionError{Field: "Token", Value: o.Token, Reason: "letters, digits and \"-\" only"}
		}
	}
	if strings.ContainsAny(o.IP, " \t\n") {
		return &OptionError{Field: "IP", Value: o.IP, Reason: "an address has no spaces"}
	}
	if o.ImageSize < 0 {
		return &OptionError{Field: "ImageSize", Value: o.ImageSize, Reason: "must not be negative"}
	}
	return nil
}
