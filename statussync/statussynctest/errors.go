package statussynctest

import (
	"errors"

	"github.com/nodestate/nodestate/internal/errs"
)

// ErrInvalidOptions is returned by [NewAPIWithOptions] for options it
// refuses. Every error the package returns wraps it.
var ErrInvalidOptions = errors.New("statussynctest: invalid options")

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "statussynctest" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }
