package containerstate_test

import (
	"time"

	"flag"
	"os"
	"testing"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/internal/rapidcheck"
	"pgregory.net/rapid"
)

// minChecks is the number of generated cases each property runs at least,
// unless -rapid.checks says otherwise.
const minChecks = 1000

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(minChecks); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestInvariants runs the invariant checker over generated runtime event
// sequences, with the default options and with the kubelet's UNKNOWN rule
// (grace 0): at least 1,000 sequences each per go test run.
func TestInvariants(t *testing.T) {
	for _, opts := range []struct {
		name string
		o    containerstate.Options
	}{
		{"defaults", containerstate.DefaultOptions()},
		{"grace0", containerstate.Options{Features: containerstate.DefaultFeatures()}},
	} {
		t.Run(opts.name, func(t *testing.T) {
			sequences := 0
			rapid.Check(t, func(t *rapid.T) {
				sequences++
				target := containerstatetest.Target().Draw(t, "target")
				events := containerstatetest.Events(target).Draw(t, "events")
				m, err := containerstate.NewMachine(opts.o, target.Pod, target.Name)
				if err != nil {
					t.Fatalf("NewMachine: %v", err)
				}
				check := containerstatetest.NewChecker(target, opts.o.Features)
				if err := check.Step(containerstate.Event{}, m.Status()); err != nil {
					t.Fatal(err)
				}
				for _, ev := range events {
					if err := m.Step(ev); err != nil {
						t.Fatalf("a runtime sequence was refused: %v", err)
					}
					if err := check.Step(ev, m.Status()); err != nil {
						t.Fatal(err)
					}
				}
			})
			if want := rapidcheck.Checks(); sequences < want {
				t.Fatalf("ran %d sequences, want at least %d", sequences, want)
			}
			t.Logf("%d event sequences checked", sequences)
		})
	}
}

// TestPropertyTimeOnlyMattersAtNextWake checks that Machine.NextWake tells
// the whole truth about time: after every event of a generated sequence, a
// Tick at any instant before the wake-up (or at any instant at all when
// there is none) gives the same status as a Tick at the time of the last
// event, and a Tick at the wake-up changes the status.
func TestPropertyTimeOnlyMattersAtNextWake(t *testing.T) {
	for _, opts := range []struct {
		name string
		o    containerstate.Options
	}{
		{"defaults", containerstate.DefaultOptions()},
		{"grace0", containerstate.Options{Features: containerstate.DefaultFeatures()}},
	} {
		t.Run(opts.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				target := containerstatetest.Target().Draw(t, "target")
				events := containerstatetest.Events(target).Draw(t, "events")
				m, err := containerstate.NewMachine(opts.o, target.Pod, target.Name)
				if err != nil {
					t.Fatal(err)
				}
				tickAt := func(at time.Time) string {
					c := *m
					if err := c.Advance(at); err != nil {
						t.Fatalf("Advance(%v): %v", at, err)
					}
					s := c.Status()
					return s.String()
				}
				for _, ev := range events {
					if err := m.Step(ev); err != nil {
						t.Fatalf("a runtime sequence was refused: %v", err)
					}
					last, _ := m.Last()
					resync := tickAt(last)
					wake, ok := m.NextWake()
					later := last.Add(time.Duration(rapid.Int64Range(0, int64(24*time.Hour)).Draw(t, "later")))
					if ok {
						if !wake.After(last) {
							t.Fatalf("after %v: wake-up %v is not after the last event %v", ev, wake, last)
						}
						if later.After(wake) || later.Equal(wake) {
							later = wake.Add(-time.Nanosecond)
						}
						if tickAt(wake) == resync {
							t.Fatalf("after %v: a Tick at the wake-up %v changes nothing: %v", ev, wake, resync)
						}
					}
					if got := tickAt(later); got != resync {
						t.Fatalf("after %v (wake-up %v, %v): a Tick at %v gives\n%v\nat %v gives\n%v", ev, wake, ok, later, got, last, resync)
					}
				}
			})
		})
	}
}
