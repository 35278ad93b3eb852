package podphase

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// steadyPod is the baseline's pod (notes/baselines.md): one running sidecar
// plus n running regular containers, restartPolicy Always.
func steadyPod(n int) *v1.Pod {
	yes := true
	pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{sidecar("sidecar")}}}
	pod.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "sidecar", Ready: true, Started: &yes, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("app-%d", i)
		pod.Spec.Containers = append(pod.Spec.Containers, ctr(name))
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, v1.ContainerStatus{Name: name, Ready: true, Started: &yes, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}})
	}
	pod.Status.Phase = v1.PodRunning
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionTrue}}
	return pod
}

func BenchmarkPhase(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			pod := steadyPod(n)
			b.ReportAllocs()
			for b.Loop() {
				if Phase(pod) != v1.PodRunning {
					b.Fatal("not running")
				}
			}
		})
	}
}

// BenchmarkPhaseOrder runs Phase on statuses in the orders they come in:
// the kubelet's (sorted by name, which is not the spec order of app-0 ...
// app-99), and reversed, the worst case, where the lookup falls back to a
// linear scan.
func BenchmarkPhaseOrder(b *testing.B) {
	for _, n := range []int{10, 100} {
		for _, order := range []string{"byName", "reversed"} {
			b.Run(fmt.Sprintf("%s/containers=%d", order, n), func(b *testing.B) {
				pod := steadyPod(n)
				s := pod.Status.ContainerStatuses
				if order == "byName" {
					sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
				} else {
					slices.Reverse(s)
				}
				b.ReportAllocs()
				for b.Loop() {
					if Phase(pod) != v1.PodRunning {
						b.Fatal("not running")
					}
				}
			})
		}
	}
}

func BenchmarkExplain(b *testing.B) {
	pod := steadyPod(10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Explain(Input{Pod: pod}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPhaseAllocatesNothing(t *testing.T) {
	for _, n := range []int{1, 10, 100} {
		pod := steadyPod(n)
		if a := testing.AllocsPerRun(100, func() { Phase(pod) }); a != 0 {
			t.Errorf("Phase with %d containers: %v allocs, want 0", n, a)
		}
	}
}

func BenchmarkConditions(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			pod := steadyPod(n)
			in := ConditionsInput{Pod: pod, Status: &pod.Status, Now: t1}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Conditions(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGenerateStatus(b *testing.B) {
	pod := steadyPod(10)
	in := StatusInput{Input: Input{Pod: pod}, InitContainerStatuses: pod.Status.InitContainerStatuses, ContainerStatuses: pod.Status.ContainerStatuses, Now: t1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := GenerateStatus(in); err != nil {
			b.Fatal(err)
		}
	}
}
