package nodecondition

import (
	"strconv"
	"time"
)

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func timeErr(op string, now, last time.Time) error {
	return &TimeError{Op: op, Now: now.UTC().Format(time.RFC3339Nano), Last: last.UTC().Format(time.RFC3339Nano)}
}
