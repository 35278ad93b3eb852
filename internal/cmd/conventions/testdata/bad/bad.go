// Package bad breaks each convention once.
package bad

import "k8s.io/utils/clock"

// EngineOptions configures an Engine, without its Default function.
type EngineOptions struct{ Clock clock.PassiveClock }

// Engine is configured last.
type Engine struct{}

// NewEngine takes its options last.
func NewEngine(dep *Engine, opts EngineOptions) (*Engine, error) { return nil, nil }

// RunConfig is options under another name.
type RunConfig struct{}

// OptionError has another shape.
type OptionError struct {
	Field  string
	Detail string
}

func (e *OptionError) Error() string { return e.Field }

// ErrOld is the old name.
//
// Deprecated: use ErrNew.
var ErrOld = error(nil)
