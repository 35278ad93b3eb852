package events

import (
	"errors"
	"fmt"
)

// ErrNilEvent is returned when a nil event is given to the correlator.
var ErrNilEvent = errors.New("events: event is nil")

// ErrShutdown is returned when an event is recorded after the broadcaster was shut down.
var ErrShutdown = errors.New("events: broadcaster is shut down")

// ErrQueueFull is returned when a sink's queue is full and the event was dropped for it.
var ErrQueueFull = errors.New("events: queue full, event dropped")

// ErrNotRetryable marks a sink error that must not be retried. A sink wraps an error with it
// (fmt.Errorf("%w: %w", events.ErrNotRetryable, err)) when the request could not even be built,
// as client-go does for a rest.RequestConstructionError.
var ErrNotRetryable = errors.New("events: not retryable")

// InvalidEventError reports an event the recorder refused. Field names the offending field
// (type, reason, action, note, regarding) and Value carries what was given.
type InvalidEventError struct {
	// Field is what was refused: object, type, reason, action or note.
	Field string
	// Value is the refused value (the object's Go type for field object).
	Value string
	// Detail says why.
	Detail string
}

// Error returns "events: invalid <field> <value>: <detail>", the value cut at 64 bytes.
func (e *InvalidEventError) Error() string {
	v := e.Value
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return fmt.Sprintf("events: invalid %s %q: %s", e.Field, v, e.Detail)
}

// OptionError reports an option the constructor refused, with the field and the value given.
type OptionError struct {
	// Field is the option's name.
	Field string
	// Value is the refused value.
	Value string
	// Detail says what the option needs.
	Detail string
}

// Error returns "events: option <field>=<value>: <detail>".
func (e *OptionError) Error() string {
	return fmt.Sprintf("events: option %s=%s: %s", e.Field, e.Value, e.Detail)
}
