package containerstate_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/kubeversion"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"
)

var convT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// genOptions draws the options of a conversion: any minor, the gates that
// add fields to a status on or off, and an UNKNOWN grace or none.
func genOptions(t *rapid.T) containerstate.Options {
	o := containerstate.DefaultOptionsFor(rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version"))
	o.Features.InPlacePodVerticalScaling = rapid.Bool().Draw(t, "ippvs")
	o.Features.SupplementalGroupsPolicy = rapid.Bool().Draw(t, "sgp")
	o.Features.ContainerStopSignals = rapid.Bool().Draw(t, "stopSignals")
	o.Features.RestartAllContainersOnContainerExits = rapid.Bool().Draw(t, "restartAll")
	o.UnknownGrace = time.Duration(rapid.IntRange(0, 3).Draw(t, "grace")) * time.Minute
	return o
}

// genInstance draws a runtime instance of c, or nil.
func genInstance(t *rapid.T, c *v1.Container, label string, created time.Time) *containerstate.Instance {
	state := containerstate.RuntimeState(rapid.IntRange(0, int(containerstate.RuntimeUnknown)).Draw(t, label+"-state"))
	if state == 0 {
		return nil
	}
	in := &containerstate.Instance{ID: "c://" + label + fmt.Sprint(rapid.IntRange(0, 2).Draw(t, label+"-id")), State: state,
		CreatedAt: created, StartedAt: created.Add(time.Second), ExitCode: containerstatetest.ExitCode().Draw(t, label+"-exit"),
		RestartCount: int32(rapid.IntRange(0, 4).Draw(t, label+"-rc")), Image: rapid.SampledFrom([]string{"", c.Image, "other:2"}).Draw(t, label+"-image"),
		ImageID: rapid.SampledFrom([]string{"", "docker.io/x@sha256:1"}).Draw(t, label+"-imageID")}
	if state == containerstate.RuntimeExited {
		in.FinishedAt = created.Add(2 * time.Second)
		in.Reason = rapid.SampledFrom([]string{containerstate.ReasonCompleted, containerstate.ReasonError, containerstate.ReasonOOMKilled}).Draw(t, label+"-reason")
		in.Message = rapid.SampledFrom([]string{"", "bye"}).Draw(t, label+"-message")
	}
	in.Resources = containerstatetest.Actuated(c).Draw(t, label+"-actuated")
	if rapid.Bool().Draw(t, label+"-user") {
		groups := []int64(nil)
		if n := rapid.IntRange(-1, 2).Draw(t, label+"-groups"); n >= 0 {
			groups = make([]int64, n)
		}
		in.User = &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: groups}}
	}
	if rapid.Bool().Draw(t, label+"-signal") {
		sig := v1.SIGTERM
		in.StopSignal = &sig
	}
	return in
}

// genInput draws a conversion of one container of spec: its two newest
// instances, an old status (itself a conversion, so that it carries the
// fields a status can have), a start error, probe results and times.
func genInput(t *rapid.T, o containerstate.Options, spec *v1.PodSpec, label string, withOld bool) containerstate.Input {
	names := []string{}
	for _, c := range spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	name := rapid.SampledFrom(names).Draw(t, label+"-name")
	c := find(spec, name)
	in := containerstate.Input{Pod: containerstate.Pod{Spec: spec, Name: "pod", Namespace: "ns", UID: "uid",
		PodFacts: containerstate.PodFacts{Deleting: rapid.Bool().Draw(t, label+"-deleting"), RestartingAllContainers: rapid.Bool().Draw(t, label+"-restartingAll"),
			RegularContainerCreated: rapid.Bool().Draw(t, label+"-created"), RecursiveReadOnlyMounts: rapid.Bool().Draw(t, label+"-rro")}},
		Name: name, Now: convT0.Add(time.Duration(rapid.IntRange(0, 300).Draw(t, label+"-now")) * time.Second)}
	in.Newest = genInstance(t, c, label+"-newest", convT0.Add(10*time.Second))
	in.Previous = genInstance(t, c, label+"-previous", convT0)
	if rapid.Bool().Draw(t, label+"-startErr") {
		in.StartError = &containerstate.StartError{Reason: containerstate.ReasonCrashLoopBackOff, Message: "back-off"}
	}
	probes := []containerstate.ProbeResult{containerstate.ProbeNone, containerstate.ProbeSuccess, containerstate.ProbeFailure}
	in.Probes.Startup = rapid.SampledFrom(probes).Draw(t, label+"-startup")
	in.Probes.Readiness = rapid.SampledFrom(probes).Draw(t, label+"-readiness")
	if rapid.Bool().Draw(t, label+"-unknownSince") {
		in.UnknownSince = convT0
	}
	if withOld && rapid.Bool().Draw(t, label+"-hasOld") {
		oldIn := genInput(t, o, spec, label+"-old", false)
		oldIn.Name = name
		if old, err := o.Convert(oldIn); err == nil {
			in.Old = &old
		}
	}
	return in
}

func find(spec *v1.PodSpec, name string) *v1.Container {
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == name {
			return &spec.InitContainers[i]
		}
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	for i := range spec.EphemeralContainers {
		if spec.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return nil
}

// TestPropertyConvertToIsConvert: ConvertTo into a status that held
// another conversion gives what Convert gives, field for field (nil and
// empty lists included), and writes nothing into the old status or the
// spec it read.
func TestPropertyConvertToIsConvert(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := genOptions(t)
		spec := containerstatetest.PodSpec().Draw(t, "spec")
		in := genInput(t, o, spec, "in", true)
		want, err := o.Convert(in)
		var dst v1.ContainerStatus
		if rapid.Bool().Draw(t, "dirty") {
			if prior, err := o.Convert(genInput(t, o, spec, "prior", true)); err == nil {
				dst = prior
			}
		}
		before := dst
		specCopy, oldCopy, instCopies := spec.DeepCopy(), in.Old.DeepCopy(), copyInstances(in.Newest, in.Previous)
		if errTo := o.ConvertTo(in, &dst); (err == nil) != (errTo == nil) {
			t.Fatalf("Convert: %v, ConvertTo: %v", err, errTo)
		}
		if err != nil {
			if !reflect.DeepEqual(dst, before) {
				t.Fatal("a refused ConvertTo changed its destination")
			}
			return
		}
		if !reflect.DeepEqual(want, dst) {
			t.Fatalf("ConvertTo differs from Convert (-Convert +ConvertTo):\n%s", cmp.Diff(want, dst))
		}
		// Writing into what dst points to must not reach what in read.
		scribble(&dst)
		if !reflect.DeepEqual(spec, specCopy) || !reflect.DeepEqual(in.Old, oldCopy) || !reflect.DeepEqual(copyInstances(in.Newest, in.Previous), instCopies) {
			t.Fatal("ConvertTo's destination shares memory with the spec, the old status or an instance")
		}
		if again, _ := o.Convert(in); !reflect.DeepEqual(want, again) {
			t.Fatal("a status Convert returned shares memory with a later ConvertTo's destination")
		}
	})
}

// copyInstances deep-copies what the instances point to.
func copyInstances(ins ...*containerstate.Instance) []containerstate.Instance {
	var out []containerstate.Instance
	for _, in := range ins {
		if in == nil {
			continue
		}
		c := *in
		c.Resources, c.User = in.Resources.DeepCopy(), in.User.DeepCopy()
		if in.StopSignal != nil {
			sig := *in.StopSignal
			c.StopSignal = &sig
		}
		out = append(out, c)
	}
	return out
}

// scribble overwrites everything s points to.
func scribble(s *v1.ContainerStatus) {
	for _, st := range []*v1.ContainerState{&s.State, &s.LastTerminationState} {
		if st.Waiting != nil {
			st.Waiting.Reason = "X"
		}
		if st.Running != nil {
			st.Running.StartedAt.Time = time.Time{}
		}
		if st.Terminated != nil {
			st.Terminated.Reason, st.Terminated.ExitCode = "X", -7
		}
	}
	if s.Started != nil {
		*s.Started = !*s.Started
	}
	if r := s.Resources; r != nil {
		for _, l := range []v1.ResourceList{r.Limits, r.Requests} {
			for name := range l {
				l[name] = resource.MustParse("7")
			}
			if l != nil {
				l["scribbled"] = resource.MustParse("1")
			}
		}
		for i := range r.Claims {
			r.Claims[i].Name = "X"
		}
	}
	for name := range s.AllocatedResources {
		s.AllocatedResources[name] = resource.MustParse("7")
	}
	if s.User != nil && s.User.Linux != nil {
		s.User.Linux.UID = 7
		for i := range s.User.Linux.SupplementalGroups {
			s.User.Linux.SupplementalGroups[i] = 7
		}
	}
	for i := range s.VolumeMounts {
		s.VolumeMounts[i].Name = "X"
		if s.VolumeMounts[i].RecursiveReadOnly != nil {
			*s.VolumeMounts[i].RecursiveReadOnly = "X"
		}
	}
	if s.StopSignal != nil {
		*s.StopSignal = "X"
	}
}

// TestConvertToAllocatesNothing: converting again into a status of the same
// shape allocates nothing, with resources, mounts and a user.
func TestConvertToAllocatesNothing(t *testing.T) {
	mode := v1.RecursiveReadOnlyIfPossible
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1",
		Resources:    v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}},
		VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v", ReadOnly: true, RecursiveReadOnly: &mode}}}}}
	o := containerstate.DefaultOptions()
	o.Features.SupplementalGroupsPolicy = true
	user := &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1, SupplementalGroups: []int64{2}}}
	for _, st := range []containerstate.RuntimeState{containerstate.RuntimeCreated, containerstate.RuntimeRunning, containerstate.RuntimeExited} {
		in := containerstate.Input{Pod: containerstate.Pod{Spec: spec}, Name: "app", Now: convT0,
			Newest: &containerstate.Instance{ID: "c://1", State: st, User: user, FinishedAt: convT0}}
		old, _ := o.Convert(in)
		in.Old = &old
		var dst v1.ContainerStatus
		_ = o.ConvertTo(in, &dst)
		if a := testing.AllocsPerRun(50, func() { _ = o.ConvertTo(in, &dst) }); a != 0 {
			t.Errorf("ConvertTo of a %v instance into a status of the same shape: %v allocations, want 0", st, a)
		}
	}
}
