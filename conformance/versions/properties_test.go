package versions

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/podphase"
)

// The properties of conformance/printer_test.go, conditions_test.go and
// restart_test.go, against each older release's command. Every input goes
// to the command first; nodestate then gets the objects as the command
// echoes them, that is as the release's types decoded them, so that both
// sides read the same pod (a field the release does not know is dropped, as
// its API server drops it).

// gateName names a RestartAllContainersOnContainerExits variant.
func gateName(variants []bool, on bool) string {
	switch {
	case len(variants) == 1 && !on:
		return "absent"
	case on:
		return "on"
	}
	return "off"
}

// TestDisplayMatchesUpstream compares podphase.Options.DisplayStatus and
// Columns, with the release's profile, with the release's pod table printer.
func TestDisplayMatchesUpstream(t *testing.T) {
	const name = "DisplayStatus, Columns vs printers/internalversion printPod"
	for _, u := range upstreams {
		t.Run(u.minor.dir, func(t *testing.T) {
			opts := podphase.DefaultOptionsFor(u.minor.profile)
			anchor := time.Now().Truncate(time.Second)
			inputs, mismatches := 0, 0
			defer func() { record(u.minor.dir, name, inputs, mismatches) }()
			rapid.Check(t, func(t *rapid.T) {
				drawn := podGen(anchor).Draw(t, "pod")
				inputs++
				before := time.Now()
				resp, err := u.ask(&request{Op: "print", Pod: drawn})
				after := time.Now()
				if err != nil {
					t.Fatal(err)
				}
				pod, want := resp.Pod, *resp.Row
				got := nodestateRow(t, opts, pod, before)
				if got != want {
					if late := nodestateRow(t, opts, pod, after); late == want {
						got = late
					}
				}
				status := opts.DisplayStatus(pod)
				if got != want || status != want.Status {
					mismatches++
					t.Fatalf("pod (as %s decodes it):\n%s\nnodestate %s: DisplayStatus %q, Columns %s\nupstream %s:  %s",
						u.info.Release, describe(pod, anchor), u.minor.profile, status, got, u.info.Release, want)
				}
			})
			if inputs < checks() {
				t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
			}
		})
	}
}

// TestConditionsMatchUpstream compares podphase.Options.Conditions, with
// the release's profile, with the release's condition generators, for each
// setting of RestartAllContainersOnContainerExits the release has.
func TestConditionsMatchUpstream(t *testing.T) {
	for _, u := range upstreams {
		for _, gate := range u.info.RestartAllVariants {
			name := fmt.Sprintf("Conditions vs kubelet/status Generate*Condition (RestartAllContainers %s)", gateName(u.info.RestartAllVariants, gate))
			t.Run(u.minor.dir+"/"+name, func(t *testing.T) {
				opts := podphase.DefaultOptionsFor(u.minor.profile)
				opts.Features.RestartAllContainersOnContainerExits = gate
				anchor := time.Now().Truncate(time.Second)
				inputs, mismatches := 0, 0
				defer func() { record(u.minor.dir, name, inputs, mismatches) }()
				rapid.Check(t, func(t *rapid.T) {
					c := conditionsGen(anchor).Draw(t, "case")
					resp, err := u.ask(&request{Op: "conditions", RestartAll: gate, Pod: c.pod, Status: c.status, Old: c.old,
						Sandboxes: c.sandboxes, Runtime: c.runtime})
					if err != nil {
						t.Fatal(err)
					}
					c.pod, c.status, c.old = resp.Pod, resp.Status, resp.Old
					if why := knownDifference(c, gate); why != "" {
						exclude(u.minor.dir, name, why)
						t.Skip(why)
					}
					inputs++
					got, err := opts.Conditions(podphase.ConditionsInput{Pod: c.pod, Status: c.status, Old: c.old, Sandbox: c.sandbox, RuntimeCleanedUp: c.cleanedUp, Now: anchor})
					if err != nil {
						t.Fatalf("podphase Conditions: %v", err)
					}
					if g, w := comparable(got), comparable(resp.Conditions); !equalConditions(g, w) {
						mismatches++
						t.Fatalf("%s\nnodestate %s: %s\nupstream %s:  %s", describeCase(c, anchor), u.minor.profile, conditionsString(g), u.info.Release, conditionsString(w))
					}
				})
				if inputs < checks() {
					t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
				}
			})
		}
	}
}

// TestShouldRestartMatchesUpstream compares containerstate's
// Features.ShouldRestart, with the release's gates, with the release's
// ContainerShouldRestart, where the release has it.
func TestShouldRestartMatchesUpstream(t *testing.T) {
	for _, u := range upstreams {
		for _, gate := range u.info.RestartAllVariants {
			name := fmt.Sprintf("ShouldRestart vs ContainerShouldRestart (RestartAllContainers %s)", gateName(u.info.RestartAllVariants, gate))
			if u.info.NoShouldRestart != "" {
				notRun(u.minor.dir, name, u.info.NoShouldRestart)
				continue
			}
			t.Run(u.minor.dir+"/"+name, func(t *testing.T) {
				f := containerstate.DefaultFeaturesFor(u.minor.profile)
				f.RestartAllContainersOnContainerExits = gate
				inputs, mismatches := 0, 0
				defer func() { record(u.minor.dir, name, inputs, mismatches) }()
				rapid.Check(t, func(t *rapid.T) {
					inputs++
					target := containerstatetest.Target().Draw(t, "target")
					exit := containerstatetest.ExitCode().Draw(t, "exit")
					resp, err := u.ask(&request{Op: "restart", RestartAll: gate, Pod: &v1.Pod{Spec: *target.Pod.Spec}, Container: &target.Container, Exit: exit})
					if err != nil {
						t.Fatal(err)
					}
					target.Pod.Spec, target.Container = &resp.Pod.Spec, *resp.Container
					if got := f.ShouldRestart(target.Pod.Spec, &target.Container, exit); got != resp.Restart {
						mismatches++
						t.Fatalf("%s\nShouldRestart(exit %d) = %v with the %s gates, upstream %s %v", describeTarget(target), exit, got, u.minor.profile, u.info.Release, resp.Restart)
					}
				})
				if inputs < checks() {
					t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
				}
			})
		}
	}
}
