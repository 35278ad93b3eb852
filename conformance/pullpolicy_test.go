package conformance

import (
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	"pgregory.net/rapid"
)

// TestDefaultPullPolicyIsTheAPIServers: a container without an
// imagePullPolicy is pulled under the policy the API server's defaulting
// gives it (SetDefaults_Container, which parses the image with the
// normalized reference parser): Always for the tag latest or no tag and
// no digest, IfNotPresent otherwise and for a reference the parser
// refuses (spec/podlifecycle.md rule 5). The references are drawn near
// the grammar's edges (podlifecycletest.ImageReference).
func TestDefaultPullPolicyIsTheAPIServers(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	always := 0
	rapid.Check(t, func(t *rapid.T) {
		for _, ref := range rapid.SliceOfN(podlifecycletest.ImageReference(), 20, 20).Draw(t, "refs") {
			want := v1.Container{Name: "app", Image: ref}
			corev1defaults.SetDefaults_Container(&want)
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: ref}}}}
			m, err := podlifecycle.New(podlifecycle.DefaultOptions(), pod)
			if err != nil {
				t.Fatalf("%q: %v", ref, err)
			}
			var res podlifecycle.Result
			if err := m.StepTo(at, pod, nil, &res); err != nil {
				t.Fatal(err)
			}
			ready := []podlifecycle.Observation{{Kind: podlifecycle.SandboxReady, Attempt: res.Actions[0].Attempt, IP: "10.0.0.1"}}
			if err := m.StepTo(at, pod, ready, &res); err != nil {
				t.Fatal(err)
			}
			got := v1.PullPolicy("(no pull)")
			for _, a := range res.Actions {
				if a.Kind == podlifecycle.PullImage {
					got = a.PullPolicy
				}
			}
			if got != want.ImagePullPolicy {
				t.Fatalf("%q: pulled under %s, the API server defaults %s", ref, got, want.ImagePullPolicy)
			}
			if got == v1.PullAlways {
				always++
			}
		}
	})
	if always == 0 {
		t.Fatal("no reference defaulted to Always: the property compares IfNotPresent only")
	}
}
