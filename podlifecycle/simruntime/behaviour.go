package simruntime

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
)

// Behaviour is how every instance of one container behaves in the
// simulated [Runtime]. The zero value is a container that runs forever,
// whose image pulls at once, whose probes always succeed, that stops as soon
// as it gets SIGTERM, and whose hooks succeed at once.
//
// Its text form is one clause per behaviour, separated by ";" (see
// [ParseBehaviours]): "run 30s exit 1; pull fail 2; liveness fail
// 60s-90s; ignore-sigterm 10s".
type Behaviour struct {
	// Exits says whether an instance exits by itself: after Run, with
	// ExitCode. When false it runs until it is killed ("run forever").
	Exits    bool
	Run      time.Duration
	ExitCode int32
	// PullFailures is how many pulls of the container's image fail before
	// one succeeds ("pull fail 2"); PullAlwaysFails makes every pull fail
	// ("pull fail always").
	PullFailures    int
	PullAlwaysFails bool
	// PullTime is how long each pull takes ("pull slow 20s"), failed or not.
	PullTime time.Duration
	// Probes are the probe outcomes over windows of an instance's life;
	// outside every window a probe succeeds. The first window containing
	// the time wins.
	Probes []ProbeWindow
	// IgnoreSigterm is how long an instance ignores SIGTERM
	// ("ignore-sigterm 10s"). A kill with grace g stops it after
	// min(g, IgnoreSigterm): with SIGKILL (exit 137) when the grace runs
	// out first, else by the SIGTERM it finally honours (exit 143).
	IgnoreSigterm time.Duration
	// PostStart and PreStop are how the container's hooks behave, when the
	// pod spec has them.
	PostStart, PreStop HookBehaviour
}

// ProbeWindow is the outcome of one probe from From to To after the
// instance started ("liveness fail 60s-90s"). To zero means no end
// ("readiness fail 30s-").
type ProbeWindow struct {
	// Probe is the probe the window is for.
	Probe podlifecycle.Probe
	// Outcome is what the probe reports inside the window.
	Outcome podlifecycle.ProbeOutcome
	// From and To bound the window, [From, To); To zero is open-ended.
	From, To time.Duration
}

// HookBehaviour is how one lifecycle hook behaves: it takes Duration and
// fails when Fail is set ("prestop 5s fail").
type HookBehaviour struct {
	// Duration is how long the hook runs.
	Duration time.Duration
	// Fail makes the hook fail.
	Fail bool
}

// Behaviours are the behaviours of a pod's containers, by container name. A
// container that has none gets [DefaultBehaviour].
type Behaviours map[string]Behaviour

// DefaultBehaviour is the behaviour of a container without one: a regular
// init container runs for a second and exits 0, any other runs forever.
func DefaultBehaviour(regularInit bool) Behaviour {
	if regularInit {
		return Behaviour{Exits: true, Run: time.Second}
	}
	return Behaviour{}
}

// outcome returns what probe p reports at age d of an instance.
func (b *Behaviour) outcome(p podlifecycle.Probe, d time.Duration) podlifecycle.ProbeOutcome {
	for _, w := range b.Probes {
		if w.Probe == p && d >= w.From && (w.To == 0 || d < w.To) {
			return w.Outcome
		}
	}
	return podlifecycle.ProbeSuccess
}

var (
	probeWords   = map[string]podlifecycle.Probe{"startup": podlifecycle.Startup, "readiness": podlifecycle.Readiness, "liveness": podlifecycle.Liveness}
	outcomeWords = map[string]podlifecycle.ProbeOutcome{"success": podlifecycle.ProbeSuccess, "warning": podlifecycle.ProbeWarning,
		"fail": podlifecycle.ProbeFailure, "error": podlifecycle.ProbeError}
)

func probeWord(p podlifecycle.Probe) string {
	for k, v := range probeWords {
		if v == p {
			return k
		}
	}
	return "probe(" + strconv.Itoa(int(p)) + ")"
}

func outcomeWord(o podlifecycle.ProbeOutcome) string {
	for k, v := range outcomeWords {
		if v == o {
			return k
		}
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// String is the behaviour's text form, its clauses in a fixed order:
// run, pull, probes, ignore-sigterm, poststart, prestop. Clauses equal to
// the zero value's are left out, except run.
func (b Behaviour) String() string {
	var cl []string
	if b.Exits {
		cl = append(cl, "run "+b.Run.String()+" exit "+strconv.Itoa(int(b.ExitCode)))
	} else {
		cl = append(cl, "run forever")
	}
	switch {
	case b.PullAlwaysFails:
		cl = append(cl, "pull fail always")
	case b.PullFailures > 0:
		cl = append(cl, "pull fail "+strconv.Itoa(b.PullFailures))
	}
	if b.PullTime > 0 {
		cl = append(cl, "pull slow "+b.PullTime.String())
	}
	for _, w := range b.Probes {
		s := probeWord(w.Probe) + " " + outcomeWord(w.Outcome) + " " + w.From.String() + "-"
		if w.To != 0 {
			s += w.To.String()
		}
		cl = append(cl, s)
	}
	if b.IgnoreSigterm > 0 {
		cl = append(cl, "ignore-sigterm "+b.IgnoreSigterm.String())
	}
	for _, h := range [...]struct {
		word string
		h    HookBehaviour
	}{{"poststart", b.PostStart}, {"prestop", b.PreStop}} {
		if h.h == (HookBehaviour{}) {
			continue
		}
		s := h.word + " " + h.h.Duration.String()
		if h.h.Fail {
			s += " fail"
		}
		cl = append(cl, s)
	}
	return strings.Join(cl, "; ")
}

// String is the behaviours' text form, one line "name: clauses" per
// container, sorted by name. ParseBehaviours reads it back.
func (bs Behaviours) String() string {
	names := make([]string, 0, len(bs))
	for n := range bs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteString(": ")
		b.WriteString(bs[n].String())
		b.WriteByte('\n')
	}
	return b.String()
}

// maxDuration bounds every duration of the text form, so that virtual
// times stay far from overflow.
const maxDuration = 1000 * time.Hour

// ParseBehaviours reads behaviours, one container per line:
//
//	name: clause; clause; ...
//
// Blank lines and lines starting with "#" are skipped. The clauses are:
//
//	run forever                      the default
//	run <duration> exit <code>       every instance exits by itself
//	pull fail <n> | pull fail always the first n pulls fail, or all
//	pull slow <duration>             each pull takes that long
//	<probe> <outcome> <from>-[<to>]  probe: startup, readiness, liveness;
//	                                 outcome: success, warning, fail, error
//	ignore-sigterm <duration>        see Behaviour.IgnoreSigterm
//	poststart <duration> [fail]      the postStart hook
//	prestop <duration> [fail]        the preStop hook
//
// Durations are Go durations ("1m30s"), non-negative and at most 1000h.
// Names are made of letters, digits, ".", "_" and "-". Bad text returns a
// *ParseError naming the line and clause; it unwraps to ErrInvalidInput.
func ParseBehaviours(text string) (Behaviours, error) {
	bs := Behaviours{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, b, err := parseLine(line)
		if err != nil {
			err.Line = i + 1
			return nil, err
		}
		if _, dup := bs[name]; dup {
			return nil, &ParseError{Line: i + 1, Container: name, Reason: "container given twice"}
		}
		bs[name] = b
	}
	return bs, nil
}

// ParseBehaviour reads one container's clauses, without the name:
// "run 30s exit 1; pull fail 2". See ParseBehaviours.
func ParseBehaviour(clauses string) (Behaviour, error) {
	b, err := parseClauses(clauses)
	if err != nil {
		err.Line = 1
		return Behaviour{}, err
	}
	return b, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func parseLine(line string) (string, Behaviour, *ParseError) {
	name, rest, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	if !ok {
		return "", Behaviour{}, &ParseError{Reason: `missing ":" after the container name`}
	}
	if !validName(name) {
		return "", Behaviour{}, &ParseError{Reason: "invalid container name " + strconv.Quote(name)}
	}
	b, err := parseClauses(rest)
	if err != nil {
		err.Container = name
		return "", Behaviour{}, err
	}
	return name, b, nil
}

// parseClauses reads the clauses of one container's behaviour, separated
// by semicolons; each kind of clause may be given once, a probe's windows
// as many times as it has windows.
func parseClauses(text string) (Behaviour, *ParseError) {
	var b Behaviour
	seen := map[string]bool{}
	for _, cl := range strings.Split(text, ";") {
		cl = strings.TrimSpace(cl)
		if cl == "" {
			continue
		}
		f := strings.Fields(cl)
		key := f[0]
		if key == "pull" && len(f) > 1 {
			key += " " + f[1]
		}
		if _, isProbe := probeWords[f[0]]; !isProbe {
			if seen[key] {
				return b, &ParseError{Clause: cl, Reason: "given twice"}
			}
			seen[key] = true
		}
		if reason := parseClause(&b, f); reason != "" {
			return b, &ParseError{Clause: cl, Reason: reason}
		}
	}
	return b, nil
}

// parseClause sets what the clause of words f says in b, or returns what is
// wrong with it.
func parseClause(b *Behaviour, f []string) string {
	switch f[0] {
	case "run":
		return parseRun(b, f)
	case "pull":
		return parsePull(b, f)
	case "startup", "readiness", "liveness":
		return parseProbe(b, f)
	case "ignore-sigterm":
		if len(f) != 2 {
			return `want "ignore-sigterm <duration>"`
		}
		d, err := parseDuration(f[1])
		if err != "" {
			return err
		}
		b.IgnoreSigterm = d
	case "poststart", "prestop":
		if len(f) < 2 || len(f) > 3 || (len(f) == 3 && f[2] != "fail") {
			return `want "` + f[0] + ` <duration> [fail]"`
		}
		d, err := parseDuration(f[1])
		if err != "" {
			return err
		}
		h := HookBehaviour{Duration: d, Fail: len(f) == 3}
		if f[0] == "poststart" {
			b.PostStart = h
		} else {
			b.PreStop = h
		}
	default:
		return "unknown clause " + strconv.Quote(f[0])
	}
	return ""
}

// parseRun reads "run forever" or "run <duration> exit <code>".
func parseRun(b *Behaviour, f []string) string {
	switch {
	case len(f) == 2 && f[1] == "forever":
	case len(f) == 4 && f[2] == "exit":
		d, err := parseDuration(f[1])
		if err != "" {
			return err
		}
		code, perr := strconv.ParseInt(f[3], 10, 32)
		if perr != nil {
			return "exit code " + strconv.Quote(f[3]) + " is not a 32-bit integer"
		}
		b.Exits, b.Run, b.ExitCode = true, d, int32(code)
	default:
		return `want "run forever" or "run <duration> exit <code>"`
	}
	return ""
}

// parsePull reads "pull fail <n>", "pull fail always" or "pull slow <duration>".
func parsePull(b *Behaviour, f []string) string {
	switch {
	case len(f) == 3 && f[1] == "fail" && f[2] == "always":
		b.PullAlwaysFails = true
	case len(f) == 3 && f[1] == "fail":
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > 1_000_000 {
			return "failure count " + strconv.Quote(f[2]) + " is not an integer from 0 to 1000000"
		}
		b.PullFailures = n
	case len(f) == 3 && f[1] == "slow":
		d, err := parseDuration(f[2])
		if err != "" {
			return err
		}
		b.PullTime = d
	default:
		return `want "pull fail <n>", "pull fail always" or "pull slow <duration>"`
	}
	return ""
}

// parseProbe reads one window of a probe: "<probe> <outcome> <from>-[<to>]".
func parseProbe(b *Behaviour, f []string) string {
	if len(f) != 3 {
		return `want "<probe> <outcome> <from>-[<to>]"`
	}
	o, ok := outcomeWords[f[1]]
	if !ok {
		return "unknown outcome " + strconv.Quote(f[1]) + " (success, warning, fail, error)"
	}
	from, to, ok := strings.Cut(f[2], "-")
	if !ok {
		return "window " + strconv.Quote(f[2]) + " is not <from>-[<to>]"
	}
	w := ProbeWindow{Probe: probeWords[f[0]], Outcome: o}
	var err string
	if w.From, err = parseDuration(from); err != "" {
		return err
	}
	if to != "" {
		if w.To, err = parseDuration(to); err != "" {
			return err
		}
		if w.To <= w.From {
			return "window ends at or before it begins"
		}
	}
	b.Probes = append(b.Probes, w)
	return ""
}

// parseDuration returns the duration or what is wrong with it.
func parseDuration(s string) (time.Duration, string) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, "duration " + strconv.Quote(s) + " is not a Go duration"
	case d < 0:
		return 0, "duration " + strconv.Quote(s) + " is negative"
	case d > maxDuration:
		return 0, "duration " + strconv.Quote(s) + " is longer than 1000h"
	}
	return d, ""
}
