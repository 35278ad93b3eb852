package events_test

import "errors"

func asOptionError(err error, target any) bool { return errors.As(err, target) }
