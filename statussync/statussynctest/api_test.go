package statussynctest

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

func newPod(api *API, t *testing.T) *v1.Pod {
	t.Helper()
	p, err := api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAPIAnswersLikeTheServer checks the answers measured on kube-apiserver
// v1.37.2 (notes/real-apiserver.md).
func TestAPIAnswersLikeTheServer(t *testing.T) {
	ctx := context.Background()
	api := NewAPI(1)
	p := newPod(api, t)
	_ = api.Update("ns", "p", func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: "example.com/x", Status: v1.ConditionTrue}}
	})

	patched, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"metadata":{"uid":"u1"},"status":{"conditions":[{"type":"Ready","status":"True"}],"phase":"Running"},"spec":{"nodeName":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(patched.Status.Conditions) != 2 || patched.Spec.NodeName != "" || patched.Status.Phase != v1.PodRunning {
		t.Errorf("a strategic merge patch of the status merges conditions by type and leaves the spec: %+v", patched)
	}
	if patched.ResourceVersion == p.ResourceVersion {
		t.Error("a write bumps the resource version")
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"metadata":{"uid":"other"},"status":{"phase":"Failed"}}`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.uid") {
		t.Errorf("a wrong UID in a patch is 422 Invalid on metadata.uid, got %v", err)
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"metadata":{"uid":"u1","resourceVersion":"1"},"status":{"phase":"Failed"}}`)); !apierrors.IsConflict(err) {
		t.Errorf("a stale resourceVersion in a patch is 409, got %v", err)
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":0}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"running":{}}}]}}`)); !apierrors.IsInvalid(err) {
		t.Errorf("a terminated container of a Never pod running again is 422, got %v", err)
	}
	if err := api.DeletePod(ctx, "ns", "p", "other"); !apierrors.IsConflict(err) {
		t.Errorf("a DELETE with a wrong UID precondition is 409, got %v", err)
	}
	if err := api.DeletePod(ctx, "ns", "p", "u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetPod(ctx, "ns", "p"); !apierrors.IsNotFound(err) {
		t.Errorf("a deleted pod is 404, got %v", err)
	}
	if got := api.Requests(); got["patch"] != 5 || got["delete"] != 2 || got["get"] != 1 {
		t.Errorf("requests counted by verb: %v", got)
	}
}

func TestFaults(t *testing.T) {
	api := NewAPI(7)
	newPod(api, t)
	api.SetFaults(Faults{ErrorRate: 1})
	if _, err := api.GetPod(context.Background(), "ns", "p"); !apierrors.IsInternalError(err) {
		t.Errorf("ErrorRate 1 fails every request, got %v", err)
	}
	api.SetFaults(Faults{ConflictRate: 1})
	if _, err := api.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`)); !apierrors.IsConflict(err) {
		t.Errorf("ConflictRate 1 refuses every patch, got %v", err)
	}
	api.SetFaults(Faults{})
	if _, err := api.Recreate("ns", "p", "u2"); err != nil {
		t.Fatal(err)
	}
	if p, _ := api.Pod("ns", "p"); p.UID != "u2" {
		t.Error("Recreate gives the pod a new UID")
	}
}

// TestHistoryCatches shows that each rule of History can fail.
func TestHistoryCatches(t *testing.T) {
	pod := func(msg string, phase v1.PodPhase, conds ...v1.PodCondition) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Status: v1.PodStatus{Message: msg, Phase: phase, Conditions: conds}}
	}
	h := NewHistory()
	h.Cached("u", 1, "a")
	h.Cached("u", 2, "b")
	h.Write(pod("b", v1.PodRunning), "patch")
	h.Write(pod("a", v1.PodRunning), "patch")
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "version 1 written after version 2") {
		t.Errorf("an older version after a newer one: %v", err)
	}
	h = NewHistory()
	h.Write(pod("", v1.PodFailed), "patch")
	h.Write(pod("", v1.PodRunning), "patch")
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "terminal phase") {
		t.Errorf("a terminal phase replaced: %v", err)
	}
	h = NewHistory()
	h.Write(pod("", v1.PodRunning, v1.PodCondition{Type: "example.com/x", Status: v1.ConditionTrue}), "foreign")
	h.Write(pod("", v1.PodRunning), "patch")
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "lost") {
		t.Errorf("another writer's condition lost: %v", err)
	}
	if h.Writes() != 1 {
		t.Errorf("writes counted: %d", h.Writes())
	}
}

// TestScriptedFaults: each scripted fault answers as documented; a late
// PATCH lands after the next one, with the checks of that moment.
func TestScriptedFaults(t *testing.T) {
	ctx := context.Background()
	api := NewAPI(1)
	newPod(api, t)
	api.FailNext("get", FaultNotFound)
	if _, err := api.GetPod(ctx, "ns", "p"); !apierrors.IsNotFound(err) {
		t.Errorf("FaultNotFound on a GET: %v", err)
	}
	api.FailNext("patch", FaultLostAnswer)
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"phase":"Running"}}`)); !apierrors.IsInternalError(err) {
		t.Errorf("FaultLostAnswer answers 500: %v", err)
	}
	if p, _ := api.Pod("ns", "p"); p.Status.Phase != v1.PodRunning {
		t.Errorf("FaultLostAnswer stores the write: %s", p.Status.Phase)
	}
	cur, _ := api.Pod("ns", "p")
	api.FailNext("patch", FaultLate)
	late := []byte(`{"metadata":{"resourceVersion":"` + cur.ResourceVersion + `"},"status":{"message":"late"}}`)
	if _, err := api.PatchPodStatus(ctx, "ns", "p", late); !apierrors.IsTimeout(err) || api.Pending() != 1 {
		t.Errorf("FaultLate answers 504 and keeps the write pending: %v, %d pending", err, api.Pending())
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"message":"newer"}}`)); err != nil {
		t.Fatal(err)
	}
	if p, _ := api.Pod("ns", "p"); p.Status.Message != "newer" || api.Pending() != 0 {
		t.Errorf("the late write with a stale resourceVersion is refused when it lands: %q, %d pending", p.Status.Message, api.Pending())
	}
	api.FailNext("patch", FaultLate)
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"message":"late"}}`)); !apierrors.IsTimeout(err) {
		t.Fatal(err)
	}
	if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"message":"newer"}}`)); err != nil {
		t.Fatal(err)
	}
	if p, _ := api.Pod("ns", "p"); p.Status.Message != "late" {
		t.Errorf("a late write without a precondition overwrites the newer one: %q", p.Status.Message)
	}
	api.BeforeNextPatch(func(p *v1.Pod) { p.Status.Reason = "other" })
	got, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"message":"x"}}`))
	if err != nil || got.Status.Reason != "other" {
		t.Errorf("BeforeNextPatch writes before the patch is served: %v %+v", err, got)
	}
	api.FailNext("delete", FaultConflict)
	if err := api.DeletePod(ctx, "ns", "p", "u1"); !apierrors.IsConflict(err) {
		t.Errorf("FaultConflict on a DELETE: %v", err)
	}
	if FaultLate.String() != "late" || Fault(99).String() != "Fault(99)" {
		t.Error("Fault.String")
	}
}

// TestAPIVersionTransitions: the API refuses a container-state transition by
// the rule of the minor it stands for (spec/containerstate.md section 12.1,
// docs/versions.md row CS-V5), not always by 1.37's.
func TestAPIVersionTransitions(t *testing.T) {
	never, onFailure := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure
	tests := []struct {
		name    string
		opts    Options
		pod     v1.RestartPolicy
		own     v1.ContainerRestartPolicy
		allowed bool
		reason  string
	}{
		{"containerstate spec section 12.1: 1.37, own policy Never in an Always pod", DefaultOptions(), v1.RestartPolicyAlways, never, false,
			"1.37 asks ContainerShouldRestart, and the container's own policy Never forbids the restart"},
		{"containerstate spec section 12.1: 1.34, own policy Never in an Always pod", DefaultOptionsFor(kubeversion.V1_34), v1.RestartPolicyAlways, never, true,
			"1.34 with ContainerRestartRules off (its default) reads the pod's policy Always; the field stayed in the spec from when the gate was on"},
		{"containerstate spec section 12.1: 1.37, own policy OnFailure in a Never pod", DefaultOptions(), v1.RestartPolicyNever, onFailure, true,
			"the container's own policy OnFailure allows a restart after exit 1"},
		{"containerstate spec section 12.1: 1.34, own policy OnFailure in a Never pod", DefaultOptionsFor(kubeversion.V1_34), v1.RestartPolicyNever, onFailure, false,
			"1.34 with the gate off reads the pod's policy Never"},
		{"containerstate spec section 12.1: zero options are 1.37's minor with every gate off", Options{}, v1.RestartPolicyNever, onFailure, true,
			"from 1.35 an old spec that already uses a container policy is validated by ContainerShouldRestart, gate or not"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, err := NewAPIWithOptions(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			own := tt.own
			if _, err := api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
				Spec: v1.PodSpec{RestartPolicy: tt.pod, Containers: []v1.Container{{Name: "app", RestartPolicy: &own}}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":1}}}]}}`)); err != nil {
				t.Fatal(err)
			}
			_, err = api.PatchPodStatus(ctx, "ns", "p", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"running":{}}}]}}`))
			if tt.allowed && err != nil || !tt.allowed && !apierrors.IsInvalid(err) {
				t.Errorf("Terminated(1) to Running: error %v, want allowed %v (%s)", err, tt.allowed, tt.reason)
			}
		})
	}
}

// TestNewAPIWithOptionsRefusesVersion: a Version that is none of
// kubeversion's constants is refused, not treated as 1.37.
func TestNewAPIWithOptionsRefusesVersion(t *testing.T) {
	api, err := NewAPIWithOptions(Options{Version: kubeversion.Version(99)})
	var oe *OptionError
	if api != nil || !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) || !errors.As(err, &oe) || oe.Field != "Version" {
		t.Errorf("NewAPIWithOptions(Version 99) = %v, %v; want an *OptionError on Version", api, err)
	}
	if d := DefaultOptionsFor(kubeversion.V1_35); d.Features != containerstate.DefaultFeaturesFor(kubeversion.V1_35) || d.Version != kubeversion.V1_35 || d.Seed != 0 {
		t.Errorf("DefaultOptionsFor(1.35) = %+v", d)
	}
}
