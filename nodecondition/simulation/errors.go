package simulation

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidInput is matched (errors.Is) by every *ScenarioError: a scenario
// or scenario text that cannot run.
var ErrInvalidInput = errors.New("simulation: invalid input")

// ScenarioError reports a scenario that cannot be run or scenario text that
// cannot be read. When the cause is a nodecondition error (options that do not
// validate) or a kubeversion error (a version the scenario text names that
// is not supported), Err holds it and errors.Is matches both ErrInvalidInput
// and that package's sentinel.
type ScenarioError struct {
	Line   int    // the line of the scenario text, 0 when not parsing
	Node   string // the node concerned, "" for the scenario itself
	Reason string // what is wrong
	Err    error  // the underlying error, if any
}

// Error renders "simulation: invalid scenario: line L: node "N": REASON",
// leaving out what is unknown, and names the package once even when it
// wraps a nodecondition error.
func (e *ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString("simulation: invalid scenario: ")
	if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Node != "" {
		b.WriteString("node " + strconv.Quote(e.Node) + ": ")
	}
	reason := e.Reason
	if e.Err != nil {
		inner := strings.TrimPrefix(strings.TrimPrefix(e.Err.Error(), "nodecondition: "), "kubeversion: ")
		if reason == "" {
			reason = inner
		} else {
			reason += ": " + inner
		}
	}
	b.WriteString(reason)
	return b.String()
}

// Unwrap returns ErrInvalidInput and, when set, Err.
func (e *ScenarioError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidInput, e.Err}
	}
	return []error{ErrInvalidInput}
}

// invalid is a ScenarioError with a reason only; ParseScenario adds the line.
func invalid(reason string) error { return &ScenarioError{Reason: reason} }
