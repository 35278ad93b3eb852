package events

import (
	"strconv"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// epochTimestamp is how the "old" side of client-go's dedup patch spells its lastTimestamp
// (the Unix epoch); a new lastTimestamp that formats the same is not in the patch.
const epochTimestamp = "1970-01-01T00:00:00Z"

// appendCountPatch appends the strategic merge patch client-go sends when it updates a
// deduplicated event: the two-way patch from the same event with count 0, lastTimestamp at the
// Unix epoch and an empty message, to the event. Its keys are count, lastTimestamp and message,
// in that order, each present only when it differs from that old side, encoded as encoding/json
// encodes them (lastTimestamp at second precision in UTC, null when unset).
func appendCountPatch(dst []byte, count int32, last metav1.Time, message string) []byte {
	dst = append(dst, '{')
	n := 0
	if count != 0 {
		dst = append(dst, `"count":`...)
		dst = strconv.AppendInt(dst, int64(count), 10)
		n++
	}
	if last.IsZero() {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"lastTimestamp":null`...)
		n++
	} else {
		var ts [40]byte
		f := last.UTC().AppendFormat(ts[:0], time.RFC3339)
		if string(f) != epochTimestamp {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `"lastTimestamp":"`...)
			dst = append(dst, f...)
			dst = append(dst, '"')
			n++
		}
	}
	if message != "" {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"message":`...)
		dst = appendJSONString(dst, message)
	}
	return append(dst, '}')
}

// countPatchLen returns an upper bound of the length appendCountPatch produces, so the patch is
// built in one allocation.
func countPatchLen(message string) int {
	return len(`{"count":-2147483648,"lastTimestamp":"+292277026596-12-04T15:30:07Z","message":""}`) + 6*len(message)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as it comes out of client-go's patch: encoded by encoding/json
// (HTML-safe: <, > and & escaped; U+2028 and U+2029 escaped), decoded and encoded again, so an
// invalid UTF-8 byte ends up as a raw U+FFFD rather than the escape the first pass wrote.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
