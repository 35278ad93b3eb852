package nodecondition

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig is matched (errors.Is) by every *ConfigError.
var ErrInvalidConfig = errors.New("nodecondition: invalid configuration")

// ErrInvalidThreshold is matched (errors.Is) by every *ThresholdError.
var ErrInvalidThreshold = errors.New("nodecondition: invalid eviction threshold")

// ErrInvalidScenario is matched (errors.Is) by every *ScenarioError.
var ErrInvalidScenario = errors.New("nodecondition: invalid scenario")

// ErrTimeWentBackwards is returned by the machines when a call carries a time
// older than one they already accepted. The machine is left unchanged.
var ErrTimeWentBackwards = errors.New("nodecondition: time went backwards")

// ConfigError reports one rejected configuration value.
type ConfigError struct {
	Field  string // the configuration field, for example "GracePeriod"
	Value  string // the rejected value as text
	Reason string // why it was rejected
}

// Error renders the error as "nodecondition: invalid FIELD VALUE: REASON".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("nodecondition: invalid %s %s: %s", e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) hold.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ThresholdError reports an eviction threshold that cannot be parsed or used.
type ThresholdError struct {
	Input  string // the statement or value as given
	Reason string // why it was rejected
}

// Error renders the error with the input quoted.
func (e *ThresholdError) Error() string {
	return fmt.Sprintf("nodecondition: invalid eviction threshold %q: %s", e.Input, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidThreshold) hold.
func (e *ThresholdError) Is(target error) bool { return target == ErrInvalidThreshold }

// ScenarioError reports a simulation scenario that cannot be run.
type ScenarioError struct {
	Node   string // the node concerned, "" for the scenario itself
	Reason string // what is wrong
}

// Error renders the error, naming the node when there is one.
func (e *ScenarioError) Error() string {
	if e.Node == "" {
		return "nodecondition: invalid scenario: " + e.Reason
	}
	return fmt.Sprintf("nodecondition: invalid scenario: node %q: %s", e.Node, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidScenario) hold.
func (e *ScenarioError) Is(target error) bool { return target == ErrInvalidScenario }

// TimeError reports a call whose time is older than the last accepted one.
type TimeError struct {
	Op        string // the call refused, for example "Monitor"
	Now, Last string // the refused time and the last accepted one (RFC 3339)
}

// Error renders the error with both times.
func (e *TimeError) Error() string {
	return fmt.Sprintf("nodecondition: %s at %s is before the last accepted time %s", e.Op, e.Now, e.Last)
}

// Is makes errors.Is(err, ErrTimeWentBackwards) hold.
func (e *TimeError) Is(target error) bool { return target == ErrTimeWentBackwards }

// namedPeriod is a configuration period with its field name.
type namedPeriod struct {
	name string
	d    time.Duration
}

// allPositive returns a *ConfigError for the first period that is not
// positive.
func allPositive(ps ...namedPeriod) error {
	for _, p := range ps {
		if p.d <= 0 {
			return &ConfigError{Field: p.name, Value: p.d.String(), Reason: "must be positive"}
		}
	}
	return nil
}
