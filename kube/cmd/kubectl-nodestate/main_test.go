package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// apiServer serves a crash-looping pod "crash" in namespace "shop" and
// its events; anything else is NotFound, and namespace "secret" Forbidden.
func apiServer(t *testing.T) *httptest.Server {
	t.Helper()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: "shop", UID: "u1", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2,
				StartedAt: metav1.NewTime(t0.Add(-5 * time.Second)), FinishedAt: metav1.NewTime(t0.Add(-4 * time.Second))}}}}},
	}
	events := &corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}}
	status := func(err *apierrors.StatusError) *metav1.Status {
		s := err.ErrStatus
		s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		return &s
	}
	write := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/namespaces/shop/pods/crash":
			write(w, http.StatusOK, pod)
		case r.URL.Path == "/api/v1/namespaces/shop/events":
			write(w, http.StatusOK, events)
		case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/secret/"):
			write(w, http.StatusForbidden, status(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "crash", errors.New("no access"))))
		default:
			write(w, http.StatusNotFound, status(apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRun(t *testing.T) {
	srv := apiServer(t)
	now := func() time.Time { return t0 }
	// An address where nothing listens any more.
	gone := httptest.NewServer(http.NotFoundHandler())
	closed := gone.URL
	gone.Close()
	for _, c := range []struct {
		name    string
		args    []string
		want    string // in the output
		wantErr string // the error, "" for none
	}{
		{"text", []string{"explain", "pod", "crash", "-n", "shop"}, "next attempt in 6s", ""},
		{"json", []string{"explain", "pod", "crash", "-n", "shop", "-o", "json"}, `"delay": "10s"`, ""},
		{"yaml", []string{"explain", "pod", "crash", "-n", "shop", "-o", "yaml"}, "delay: 10s", ""},
		{"missing pod", []string{"explain", "pod", "nope", "-n", "shop"}, "", `pod "nope" not found in namespace "shop"`},
		{"forbidden", []string{"explain", "pod", "crash", "-n", "secret"}, "", `not allowed to read pod "crash" in namespace "secret": pods "crash" is forbidden`},
		{"bad output", []string{"explain", "pod", "crash", "-o", "xml"}, "", `unknown output format "xml"`},
		{"bad kind", []string{"explain", "service", "x"}, "", `cannot explain "service"`},
		{"no name", []string{"explain", "pod"}, "", "want: explain pod NAME"},
		{"bad grace", []string{"explain", "node", "n", "--node-monitor-grace-period", "-1s"}, "", "nodecondition"},
		{"unreachable cluster", []string{"explain", "node", "n", "--server", closed}, "", "cannot reach the cluster at " + closed + ": dial tcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := c.args
			if !slices.Contains(args, "--server") {
				args = append(args, "--server", srv.URL)
			}
			err := run(context.Background(), args, &out, &errOut, now)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !strings.Contains(out.String(), c.want) {
					t.Errorf("output lacks %q:\n%s", c.want, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(oneLine(err), c.wantErr) {
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}
