package integration

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// runNodeOn runs a kube.Node called name on plane p as system:node:<name>
// until the test ends.
func runNodeOn(t *testing.T, p *controlplane.Plane, name, cidr string) *kube.Node {
	t.Helper()
	cs, err := p.Client(controlplane.NodeUser(name))
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.DefaultOptions(name)
	opts.PodCIDR = cidr
	return startNode(t, cs, opts)
}

func webTemplate(labels map[string]string, annotations map[string]string, policy corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](10),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}}}},
	}
}

// TestWorkloadsOnNode: on a control plane with the real controller manager and
// scheduler, kube.Node runs the pods real controllers create, and those
// controllers report what they report for a kubelet: a Deployment with a
// readiness probe becomes Available and a rolling update completes, old pods
// terminating gracefully; a Job completes; a Job whose pod exits 42 under a
// podFailurePolicy rule FailJob on exit code 42 ends Failed with the policy's
// reason; a Job's backoffLimit counts its failed pods; a StatefulSet of 3
// creates pod N+1 only after pod N is Ready.
func TestWorkloadsOnNode(t *testing.T) {
	const name = "work-1"
	p := fullPlane(t, name)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)
	runNodeOn(t, p, name, "10.244.11.0/24")
	ctx := context.Background()

	t.Run("Deployment available and rolled", func(t *testing.T) {
		labels := map[string]string{"app": "web"}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: webTemplate(labels, nil, corev1.RestartPolicyAlways)}}
		if _, err := admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		available := func(gen int64) func(ctx context.Context) (bool, error) {
			return func(ctx context.Context) (bool, error) {
				d, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range d.Status.Conditions {
					if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
						return false, nil
					}
				}
				return d.Status.ObservedGeneration >= gen && d.Status.UpdatedReplicas == 2 && d.Status.AvailableReplicas == 2 &&
					d.Status.Replicas == 2 && d.Status.ReadyReplicas == 2, nil
			}
		}
		waitFor(t, "the Deployment Available with 2 ready replicas", 2*time.Minute, available(1))
		before, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(before.Items) != 2 {
			t.Fatalf("two pods before the rollout: %v %d", err, len(before.Items))
		}

		cur, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.Template.Annotations = map[string]string{"rollout": "2"}
		if cur, err = admin.AppsV1().Deployments(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the rolling update complete", 2*time.Minute, available(cur.Generation))
		waitFor(t, "the old pods gone after graceful termination", 2*time.Minute, func(ctx context.Context) (bool, error) {
			for _, old := range before.Items {
				p, err := admin.CoreV1().Pods(ns).Get(ctx, old.Name, metav1.GetOptions{})
				if err == nil && p.UID == old.UID {
					return false, nil
				}
			}
			return true, nil
		})
		evs, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		killed := 0
		for _, e := range evs.Items {
			for _, old := range before.Items {
				if e.InvolvedObject.UID == old.UID && e.Reason == "Killing" && e.Message == "Stopping container app" {
					killed++
				}
			}
		}
		if killed != 2 {
			t.Fatalf("each old pod's container stopped gracefully with a Killing event: %d", killed)
		}
	})

	t.Run("Job completes", func(t *testing.T) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: ns},
			Spec: batchv1.JobSpec{Template: webTemplate(nil, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 2s exit 0"}, corev1.RestartPolicyNever)}}
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the Job Complete", 2*time.Minute, func(ctx context.Context) (bool, error) {
			j, err := admin.BatchV1().Jobs(ns).Get(ctx, "done", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return jobCondition(j, batchv1.JobComplete) != nil && j.Status.Succeeded == 1, nil
		})
	})

	t.Run("Job failed by its podFailurePolicy", func(t *testing.T) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "fail42", Namespace: ns},
			Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](6),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}}}},
				Template: webTemplate(nil, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 42"}, corev1.RestartPolicyNever)}}
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the Job Failed by its pod failure policy", 2*time.Minute, func(ctx context.Context) (bool, error) {
			j, err := admin.BatchV1().Jobs(ns).Get(ctx, "fail42", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			c := jobCondition(j, batchv1.JobFailed)
			return c != nil && c.Reason == batchv1.JobReasonPodFailurePolicy && j.Status.Failed == 1, nil
		})
	})

	t.Run("Job backoffLimit counts failed pods", func(t *testing.T) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "flaky", Namespace: ns},
			Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](1),
				Template: webTemplate(nil, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 1"}, corev1.RestartPolicyNever)}}
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the Job Failed after backoffLimit+1 failed pods", 2*time.Minute, func(ctx context.Context) (bool, error) {
			j, err := admin.BatchV1().Jobs(ns).Get(ctx, "flaky", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			c := jobCondition(j, batchv1.JobFailed)
			return c != nil && c.Reason == batchv1.JobReasonBackoffLimitExceeded && j.Status.Failed == 2, nil
		})
	})

	t.Run("StatefulSet starts in order", func(t *testing.T) {
		labels := map[string]string{"app": "db"}
		w, err := admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=db"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: webTemplate(labels, nil, corev1.RestartPolicyAlways)}}
		if _, err := admin.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The watch's order: pod db-N+1 must not be added before db-N is Ready.
		ready := map[string]bool{}
		timeout := time.After(2 * time.Minute)
		for !ready["db-2"] {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended")
				}
				pod, isPod := ev.Object.(*corev1.Pod)
				if !isPod {
					continue
				}
				if ev.Type == apiwatch.Added {
					for i, prev := range []string{"", "db-0", "db-1"} {
						if pod.Name == []string{"db-0", "db-1", "db-2"}[i] && prev != "" && !ready[prev] {
							t.Fatalf("%s created before %s was Ready", pod.Name, prev)
						}
					}
				}
				if c := findCond(pod.Status.Conditions, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
					ready[pod.Name] = true
				}
			case <-timeout:
				t.Fatalf("the StatefulSet's pods did not all become Ready: %v", ready)
			}
		}
	})
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
