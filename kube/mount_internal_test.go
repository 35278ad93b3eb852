package kube

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects is a namespace's ConfigMaps, Secrets, claims and the cluster's
// runtime classes, answering as apiObjects does.
type fakeObjects struct {
	configMaps, secrets, runtimeClasses []string
	claims                              map[string]*corev1.PersistentVolumeClaim
	reads                               int
}

func (f *fakeObjects) ConfigMap(_ context.Context, _, name string) error {
	f.reads++
	if slices.Contains(f.configMaps, name) {
		return nil
	}
	return apierrors.NewNotFound(corev1.Resource("configmap"), name)
}

func (f *fakeObjects) Secret(_ context.Context, _, name string) error {
	f.reads++
	if slices.Contains(f.secrets, name) {
		return nil
	}
	return apierrors.NewNotFound(corev1.Resource("secret"), name)
}

func (f *fakeObjects) PVC(_ context.Context, _, name string) (*corev1.PersistentVolumeClaim, error) {
	f.reads++
	if c, ok := f.claims[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("persistentvolumeclaims"), name)
}

func (f *fakeObjects) RuntimeClass(_ context.Context, name string) error {
	f.reads++
	if slices.Contains(f.runtimeClasses, name) {
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}, name)
}

func claim(phase corev1.PersistentVolumeClaimPhase, volume string, deleting bool, finalizers ...string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Finalizers: finalizers},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	if deleting {
		c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return c
}

// volumePod is a pod whose container "app" mounts the volumes named in
// mounted, and whose init container "init" mounts those in initMounted.
func volumePod(vols []corev1.Volume, mounted []string, initMounted ...string) *corev1.Pod {
	pod := podOf("web", corev1.PodQOSBestEffort, []corev1.Container{ctr("init", "", "")}, ctr("app", "", ""))
	pod.Spec.Volumes = vols
	for _, m := range mounted {
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: m, MountPath: "/" + m})
	}
	for _, m := range initMounted {
		pod.Spec.InitContainers[0].VolumeMounts = append(pod.Spec.InitContainers[0].VolumeMounts, corev1.VolumeMount{Name: m, MountPath: "/" + m})
	}
	return pod
}

func cmVol(name, object string, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: object}, Optional: optional}}}
}

func secretVol(name, object string, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: object, Optional: optional}}}
}

func pvcVol(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

// TestCheckVolumes: the volumes a simulated node waits for are the kubelet
// volume manager's: only those a container mounts; a ConfigMap or Secret
// that is missing and not optional fails its set-up with the watch-based
// manager's "not found"; a claim that is missing, unbound, or being deleted
// without its protection finalizer cannot be processed, with the
// populator's errors; every other source is set up at once.
func TestCheckVolumes(t *testing.T) {
	objs := &fakeObjects{configMaps: []string{"cfg"}, secrets: []string{"tls"}, claims: map[string]*corev1.PersistentVolumeClaim{
		"bound":     claim(corev1.ClaimBound, "pv-1", false),
		"pending":   claim(corev1.ClaimPending, "", false),
		"novolume":  claim(corev1.ClaimBound, "", false),
		"deleting":  claim(corev1.ClaimBound, "pv-2", true),
		"protected": claim(corev1.ClaimBound, "pv-3", true, "kubernetes.io/pvc-protection"),
		"web-eph":   claim(corev1.ClaimBound, "pv-4", false),
	}}
	ephemeral := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}
	}
	other := []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}}}}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
	}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		setup   []string // "MountVolume.SetUp failed" messages
		process []string // the populator's errors
		wait    string   // the wait's event for a timeout
	}{
		{name: "existing ConfigMap and Secret are set up", pod: volumePod([]corev1.Volume{cmVol("c", "cfg", nil), secretVol("s", "tls", nil)}, []string{"c", "s"})},
		{name: "missing ConfigMap: set-up fails with the watch-based manager's not found",
			pod:   volumePod([]corev1.Volume{cmVol("c", "nope", nil)}, []string{"c"}),
			setup: []string{`MountVolume.SetUp failed for volume "c" : configmap "nope" not found`},
			wait:  "Unable to attach or mount volumes: unmounted volumes=[c], unattached volumes=[], failed to process volumes=[]: context deadline exceeded"},
		{name: "missing Secret, mounted by the init container only",
			pod:   volumePod([]corev1.Volume{secretVol("s", "nope", nil)}, nil, "s"),
			setup: []string{`MountVolume.SetUp failed for volume "s" : secret "nope" not found`},
			wait:  "Unable to attach or mount volumes: unmounted volumes=[s], unattached volumes=[], failed to process volumes=[]: context deadline exceeded"},
		{name: "missing optional ConfigMap and Secret are set up empty",
			pod: volumePod([]corev1.Volume{cmVol("c", "nope", ptr.To(true)), secretVol("s", "nope", ptr.To(true))}, []string{"c", "s"})},
		{name: "a missing ConfigMap no container mounts is not waited for", pod: volumePod([]corev1.Volume{cmVol("c", "nope", nil)}, nil)},
		{name: "emptyDir, projected and hostPath need nothing", pod: volumePod(other, []string{"scratch", "token", "host"})},
		{name: "bound claim", pod: volumePod([]corev1.Volume{pvcVol("d", "bound")}, []string{"d"})},
		{name: "claim being deleted under its protection finalizer is still used", pod: volumePod([]corev1.Volume{pvcVol("d", "protected")}, []string{"d"})},
		{name: "ephemeral volume: the claim named pod-volume", pod: volumePod([]corev1.Volume{ephemeral("eph")}, []string{"eph"})},
		{name: "missing claim",
			pod:     volumePod([]corev1.Volume{pvcVol("d", "gone")}, []string{"d"}),
			process: []string{`error processing PVC ns/gone: failed to fetch PVC from API server: persistentvolumeclaims "gone" not found`},
			wait:    "Unable to attach or mount volumes: unmounted volumes=[d], unattached volumes=[], failed to process volumes=[d]: context deadline exceeded"},
		{name: "unbound claim", pod: volumePod([]corev1.Volume{pvcVol("d", "pending")}, []string{"d"}),
			process: []string{"error processing PVC ns/pending: PVC is not bound"}},
		{name: "bound claim without a volume name", pod: volumePod([]corev1.Volume{pvcVol("d", "novolume")}, []string{"d"}),
			process: []string{"error processing PVC ns/novolume: PVC has empty pvc.Spec.VolumeName"}},
		{name: "claim being deleted without protection", pod: volumePod([]corev1.Volume{pvcVol("d", "deleting")}, []string{"d"}),
			process: []string{"error processing PVC ns/deleting: PVC is being deleted"}},
		{name: "ephemeral volume whose claim is not there yet", pod: volumePod([]corev1.Volume{ephemeral("cache")}, []string{"cache"}),
			process: []string{`error processing PVC ns/web-cache: failed to fetch PVC from API server: persistentvolumeclaims "web-cache" not found`}},
		{name: "several: names sorted in the wait's message",
			pod:     volumePod([]corev1.Volume{pvcVol("z", "gone"), cmVol("b", "nope", nil), cmVol("a", "nope", nil), cmVol("ok", "cfg", nil)}, []string{"z", "b", "a", "ok"}),
			setup:   []string{`MountVolume.SetUp failed for volume "b" : configmap "nope" not found`, `MountVolume.SetUp failed for volume "a" : configmap "nope" not found`},
			process: []string{`error processing PVC ns/gone: failed to fetch PVC from API server: persistentvolumeclaims "gone" not found`},
			wait:    "Unable to attach or mount volumes: unmounted volumes=[a b z], unattached volumes=[], failed to process volumes=[z]: context deadline exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := checkVolumes(context.Background(), tc.pod, objs)
			if diff := cmp.Diff(tc.setup, c.setupMessages); diff != "" {
				t.Errorf("set-up messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.process, c.processErrors); diff != "" {
				t.Errorf("process errors (-want +got):\n%s", diff)
			}
			if c.ok() != (tc.setup == nil && tc.process == nil) {
				t.Errorf("ok() = %v", c.ok())
			}
			if tc.wait != "" {
				if got := c.waitMessage(context.DeadlineExceeded.Error()); got != tc.wait {
					t.Errorf("wait message\n got %q\nwant %q", got, tc.wait)
				}
			}
		})
	}
}

// TestMountGateTiming: the gate's looks follow the kubelet's two clocks:
// set-up attempts of a missing ConfigMap at 0, 0.5 s, 1.5 s, 3.5 s, ...
// (back-off from 500 ms doubling up to 2m2s), an event each; the sync's wait
// ending after 2m3s with "Unable to attach or mount volumes" and the next
// sync waiting again 10 s later; a claim that cannot be processed ends each
// sync's wait at once, every 10 s.
func TestMountGateTiming(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type look struct {
		at     time.Duration
		events []string
		next   time.Duration
	}
	setup := `MountVolume.SetUp failed for volume "c" : configmap "nope" not found`
	timeout := "Unable to attach or mount volumes: unmounted volumes=[c], unattached volumes=[], failed to process volumes=[]: context deadline exceeded"
	pvc := "Unable to attach or mount volumes: unmounted volumes=[d], unattached volumes=[], failed to process volumes=[d]: error processing PVC ns/gone: failed to fetch PVC from API server: persistentvolumeclaims \"gone\" not found"
	ms := time.Millisecond
	cases := []struct {
		name  string
		pod   *corev1.Pod
		looks []look
	}{
		{"missing ConfigMap: set-up back-off and the 2m3s wait", volumePod([]corev1.Volume{cmVol("c", "nope", nil)}, []string{"c"}), []look{
			{0, []string{setup}, 500 * ms},
			{500 * ms, []string{setup}, 1500 * ms},
			{1500 * ms, []string{setup}, 3500 * ms},
			{3500 * ms, []string{setup}, 7500 * ms},
			{7500 * ms, []string{setup}, 15500 * ms},
			{15500 * ms, []string{setup}, 31500 * ms},
			{31500 * ms, []string{setup}, 63500 * ms},
			{63500 * ms, []string{setup}, 123 * time.Second}, // the wait ends before the next attempt at 127.5 s
			{123 * time.Second, []string{timeout}, 127500 * ms},
			{127500 * ms, []string{setup}, 133 * time.Second}, // the back-off is now at its 2m2s cap
			{133 * time.Second, nil, 249500 * ms},             // the next sync begins to wait, until 256 s
			{249500 * ms, []string{setup}, 256 * time.Second},
			{256 * time.Second, []string{timeout}, 266 * time.Second},
		}},
		{"missing claim: each sync's wait ends at once", volumePod([]corev1.Volume{pvcVol("d", "gone")}, []string{"d"}), []look{
			{0, []string{pvc}, 10 * time.Second},
			{10 * time.Second, []string{pvc}, 20 * time.Second},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mountGate{next: t0, syncAt: t0, setupAt: t0, delay: mountRetryFirst}
			for _, l := range tc.looks {
				if !g.next.Equal(at(l.at)) {
					t.Fatalf("look due at %v, want %v", g.next.Sub(t0), l.at)
				}
				c := checkVolumes(context.Background(), tc.pod, &fakeObjects{})
				got := g.failed(&c, at(l.at))
				if diff := cmp.Diff(l.events, got); diff != "" {
					t.Fatalf("at %v: events (-want +got):\n%s", l.at, diff)
				}
				if !g.next.Equal(at(l.next)) {
					t.Fatalf("at %v: next look at %v, want %v", l.at, g.next.Sub(t0), l.next)
				}
			}
		})
	}
}
