package containerstate

import (
	"errors"
	"io/fs"

	v1 "k8s.io/api/core/v1"
)

// Termination message limits of the kubelet (section 7).
const (
	// MaxTerminationMessageLength is how much of the end of the
	// terminationMessagePath file is kept.
	MaxTerminationMessageLength = 4096
	// MaxTerminationMessageLogLength is how much of the end of the log
	// fallback is kept.
	MaxTerminationMessageLogLength = 2048
	// MaxTerminationMessageLogLines is how many log lines the fallback reads.
	MaxTerminationMessageLogLines = 80
	// MaxPodTerminationMessageLength is what all the terminated messages of a
	// pod share: each gets this divided by the number of containers.
	MaxPodTerminationMessageLength = 12 * 1024
)

// TerminationInput is what the kubelet reads to build the message of an
// exited container. Reading files and logs is the caller's: pass the bytes.
type TerminationInput struct {
	// RuntimeMessage is the runtime's own message for the exit.
	RuntimeMessage string
	// Reason is the runtime's reason for the exit.
	Reason string
	// ExitCode is the exit code.
	ExitCode int32
	// Policy is the container's terminationMessagePolicy.
	Policy v1.TerminationMessagePolicy
	// Path is the container's terminationMessagePath; empty if none.
	Path string
	// PathMounted is whether Path is among the mounts the runtime reported;
	// the file is read only then.
	PathMounted bool
	// File is the file's content; only its last 4096 bytes are used.
	File []byte
	// FileErr is the error reading the file; one wrapping fs.ErrNotExist
	// means there is no file.
	FileErr error
	// Logs is the end of the container's log; only the last 80 lines and of
	// them the last 2048 bytes are used.
	Logs []byte
}

// TerminationMessage returns the message of an exited container: the
// runtime's message, then ": " and the termination message read from the file
// or, with policy FallbackToLogsOnError, from the logs of a failed container.
func TerminationMessage(in TerminationInput) string {
	fallback := in.Policy == v1.TerminationMessageFallbackToLogsOnError && in.ExitCode != 0 && in.Reason != ReasonContainerCannotRun
	extra := ""
	if in.Path != "" && in.PathMounted {
		switch {
		case in.FileErr == nil:
			extra = string(tail(in.File, MaxTerminationMessageLength))
		case !errors.Is(in.FileErr, fs.ErrNotExist):
			// A file that cannot be read says so, and the logs are not read.
			extra = "Error on reading termination log " + in.Path + ": " + in.FileErr.Error()
			fallback = false
		}
	}
	if fallback && extra == "" {
		extra = string(tail(lastLines(in.Logs, MaxTerminationMessageLogLines), MaxTerminationMessageLogLength))
	}
	switch {
	case extra == "":
		return in.RuntimeMessage
	case in.RuntimeMessage == "":
		return extra
	}
	return in.RuntimeMessage + ": " + extra
}

// TerminationMessageLimit returns the length each terminated message of a pod
// with this many containers (regular, init and ephemeral) is cut to.
func TerminationMessageLimit(containers int) int {
	if containers <= 0 {
		return MaxPodTerminationMessageLength
	}
	return MaxPodTerminationMessageLength / containers
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func lastLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end-- // a final newline ends the last line; it does not start a new one
	}
	i := end
	for lines := 0; i > 0; i-- {
		if b[i-1] == '\n' {
			lines++
			if lines == n {
				break
			}
		}
	}
	return b[i:]
}
