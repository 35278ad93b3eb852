package simruntime_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"pgregory.net/rapid"
)

func TestParseBehaviours(t *testing.T) {
	text := `
# the issue's example
app: run 30s exit 1; pull fail 2; liveness fail 60s-90s; ignore-sigterm 10s
proxy: run forever; startup warning 0s-5s; readiness error 1m-; pull slow 1.5s; poststart 2s fail; prestop 10s
init: pull fail always; run 0s exit -1
`
	got, err := simruntime.ParseBehaviours(text)
	if err != nil {
		t.Fatal(err)
	}
	want := simruntime.Behaviours{
		"app": {Exits: true, Run: 30 * time.Second, ExitCode: 1, PullFailures: 2, IgnoreSigterm: 10 * time.Second,
			Probes: []simruntime.ProbeWindow{{Probe: podlifecycle.Liveness, Outcome: podlifecycle.ProbeFailure, From: time.Minute, To: 90 * time.Second}}},
		"proxy": {PullTime: 1500 * time.Millisecond,
			Probes: []simruntime.ProbeWindow{{Probe: podlifecycle.Startup, Outcome: podlifecycle.ProbeWarning, To: 5 * time.Second},
				{Probe: podlifecycle.Readiness, Outcome: podlifecycle.ProbeError, From: time.Minute}},
			PostStart: simruntime.HookBehaviour{Duration: 2 * time.Second, Fail: true},
			PreStop:   simruntime.HookBehaviour{Duration: 10 * time.Second}},
		"init": {Exits: true, ExitCode: -1, PullAlwaysFails: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("mismatch (-want +got):\n%s", d)
	}
	wantText := `app: run 30s exit 1; pull fail 2; liveness fail 1m0s-1m30s; ignore-sigterm 10s
init: run 0s exit -1; pull fail always
proxy: run forever; pull slow 1.5s; startup warning 0s-5s; readiness error 1m0s-; poststart 2s fail; prestop 10s
`
	if d := cmp.Diff(wantText, got.String()); d != "" {
		t.Fatalf("String mismatch (-want +got):\n%s", d)
	}
}

func TestParseBehavioursRefuses(t *testing.T) {
	tests := []struct {
		text, want string
		line       int
	}{
		{"app run forever", `missing ":"`, 1},
		{"\n: run forever", `invalid container name ""`, 2},
		{"a b: run forever", `invalid container name "a b"`, 1},
		{"app: run", `want "run forever"`, 1},
		{"app: run 5 exit 1", `duration "5" is not a Go duration`, 1},
		{"app: run -5s exit 1", `is negative`, 1},
		{"app: run 5s exit x", `exit code "x"`, 1},
		{"app: run 5s exit 99999999999", `exit code`, 1},
		{"app: run forever; run forever", `given twice`, 1},
		{"app: pull fail 2; pull fail always", `given twice`, 1},
		{"app: pull fail -1", `failure count "-1"`, 1},
		{"app: pull fast", `want "pull fail <n>"`, 1},
		{"app: liveness maybe 0s-1s", `unknown outcome "maybe"`, 1},
		{"app: liveness fail 5s", `is not <from>-[<to>]`, 1},
		{"app: liveness fail 5s-5s", `ends at or before it begins`, 1},
		{"app: liveness fail 1s-2s extra", `want "<probe> <outcome>`, 1},
		{"app: ignore-sigterm", `want "ignore-sigterm <duration>"`, 1},
		{"app: prestop 1s maybe", `want "prestop <duration> [fail]"`, 1},
		{"app: sleep 5s", `unknown clause "sleep"`, 1},
		{"app: run 2000h exit 0", `longer than 1000h`, 1},
		{"app: run forever\napp: run forever", `container given twice`, 2},
	}
	for _, tt := range tests {
		_, err := simruntime.ParseBehaviours(tt.text)
		var pe *simruntime.ParseError
		if !errors.As(err, &pe) || !errors.Is(err, simruntime.ErrInvalidInput) {
			t.Errorf("%q: want a *ParseError wrapping ErrInvalidInput, got %v", tt.text, err)
			continue
		}
		if pe.Line != tt.line || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "simruntime: invalid input: ") {
			t.Errorf("%q: got %v (line %d), want line %d and %q", tt.text, err, pe.Line, tt.line, tt.want)
		}
	}
}

func TestParseBehaviour(t *testing.T) {
	b, err := simruntime.ParseBehaviour("run 5s exit 1; prestop 3s")
	if err != nil || !b.Exits || b.Run != 5*time.Second || b.PreStop.Duration != 3*time.Second {
		t.Fatalf("got %+v, %v", b, err)
	}
	if _, err := simruntime.ParseBehaviour("run"); !errors.Is(err, simruntime.ErrInvalidInput) {
		t.Fatalf("want ErrInvalidInput, got %v", err)
	}
	if got := (simruntime.Behaviour{}).String(); got != "run forever" {
		t.Fatalf("zero Behaviour is %q", got)
	}
}

// roundTrip checks that text parses, prints and parses to the same
// behaviours and the same text.
func roundTrip(t interface{ Fatalf(string, ...any) }, text string) {
	b1, err := simruntime.ParseBehaviours(text)
	if err != nil {
		return
	}
	s1 := b1.String()
	b2, err := simruntime.ParseBehaviours(s1)
	if err != nil {
		t.Fatalf("printed behaviours do not parse: %v\n%s", err, s1)
	}
	if d := cmp.Diff(b1, b2); d != "" {
		t.Fatalf("parse-print-parse changed the behaviours (-first +second):\n%s\ntext:\n%s", d, s1)
	}
	if s2 := b2.String(); s2 != s1 {
		t.Fatalf("print is not stable:\n%s\n%s", s1, s2)
	}
}

// TestBehavioursRoundTrip: generated behaviours print and parse back.
func TestBehavioursRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podlifecycletest.Pod().Draw(t, "pod")
		bs := podlifecycletest.BehavioursFor(pod).Draw(t, "behaviours")
		got, err := simruntime.ParseBehaviours(bs.String())
		if err != nil {
			t.Fatalf("%v\n%s", err, bs)
		}
		if d := cmp.Diff(bs, got); d != "" {
			t.Fatalf("mismatch (-generated +parsed):\n%s", d)
		}
	})
}

// FuzzParseBehaviour: the parser never panics, and what it accepts prints
// and parses back to the same behaviours.
func FuzzParseBehaviour(f *testing.F) {
	for _, s := range []string{
		"app: run 30s exit 1; pull fail 2; liveness fail 60s-90s; ignore-sigterm 10s",
		"proxy: startup warning 0s-5s; readiness error 1m-; pull slow 1.5s; poststart 2s fail; prestop 10s\ninit: pull fail always",
		"# comment\n\napp: run forever",
		"app: run 1h2m3.5s exit -2147483648",
		"a: ;;; run forever ;",
		"app: liveness fail 0s-1ns",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { roundTrip(t, text) })
}
