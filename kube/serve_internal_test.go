package kube

import (
	"crypto/ecdsa"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/podlifecycle"
)

// srvStore returns an empty log store.
func srvStore() *logStore { return &logStore{pods: map[types.NamespacedName]*podLogs{}} }

// srvStarted and srvExited are the observations of a container instance
// id of container app starting and exiting with code.
func srvStarted(id string) podlifecycle.Observation {
	return podlifecycle.Observation{Kind: podlifecycle.ContainerStarted, Container: "app", ContainerID: id}
}

func srvExited(id string, code int32) podlifecycle.Observation {
	return podlifecycle.Observation{Kind: podlifecycle.ContainerExited, Container: "app", ContainerID: id, ExitCode: code}
}

// srvLines returns the newest (or, with previous, the one before) output
// of container app of pod default/web, failing the test when there is none.
func srvLines(t *testing.T, s *logStore, previous bool) []string {
	t.Helper()
	lines, ok := s.get("default", "web", "app", previous)
	if !ok {
		t.Fatalf("no output (previous %v)", previous)
	}
	return lines
}

// TestLogStoreInstances: each instance of a container gets a line stamped
// with its start (the observation's time, or now when it has none) and one
// with its exit code, in its own output only; get returns the newest
// instance's output, or with previous the one before, and reports none
// when that instance, the container or the pod is unknown.
func TestLogStoreInstances(t *testing.T) {
	s := srvStore()
	pod := srvPod("web")
	if _, ok := s.get("default", "web", "app", false); ok {
		t.Fatal("an unknown pod has output")
	}
	s.record(pod, srvStarted("sim://1"), srvT0)
	want1 := []string{"2026-12-01T10:00:00Z nodestate: container app of pod default/web started (sim://1)"}
	if got := srvLines(t, s, false); !slices.Equal(got, want1) {
		t.Fatalf("first instance %q, want %q", got, want1)
	}
	if _, ok := s.get("default", "web", "app", true); ok {
		t.Error("a container that started once has a previous instance")
	}
	if _, ok := s.get("default", "web", "other", false); ok {
		t.Error("an unknown container of a known pod has output")
	}
	s.record(pod, srvStarted("sim://2"), srvT0.Add(time.Minute))
	exit := srvExited("sim://2", 3)
	exit.At = srvT0.Add(90 * time.Second)
	s.record(pod, exit, srvT0.Add(2*time.Minute))
	want2 := []string{"2026-12-01T10:01:00Z nodestate: container app of pod default/web started (sim://2)",
		"2026-12-01T10:01:30Z nodestate: container app exiting with code 3"}
	if got := srvLines(t, s, false); !slices.Equal(got, want2) {
		t.Errorf("newest instance %q, want %q", got, want2)
	}
	if got := srvLines(t, s, true); !slices.Equal(got, want1) {
		t.Errorf("previous instance %q, want %q (another instance's exit is not its own)", got, want1)
	}
	// What get returns is a copy.
	srvLines(t, s, false)[0] = "changed"
	if got := srvLines(t, s, false); !slices.Equal(got, want2) {
		t.Errorf("after changing a returned line %q", got)
	}
	s.forget(pod)
	if _, ok := s.get("default", "web", "app", false); ok {
		t.Error("a forgotten pod has output")
	}
}

// TestLogStoreKeepsTwoInstances: only the two newest instances of a
// container are kept; an exit of an instance no longer kept is ignored.
func TestLogStoreKeepsTwoInstances(t *testing.T) {
	s := srvStore()
	pod := srvPod("web")
	for i, id := range []string{"sim://1", "sim://2", "sim://3", "sim://4"} {
		now := srvT0.Add(time.Duration(i) * time.Minute)
		s.record(pod, srvStarted(id), now)
		s.record(pod, srvExited(id, int32(i)), now.Add(time.Second))
	}
	s.record(pod, srvExited("sim://1", 9), srvT0.Add(time.Hour))
	list := s.pods[types.NamespacedName{Namespace: "default", Name: "web"}].byContainer["app"]
	var ids []string
	for _, l := range list {
		ids = append(ids, l.id)
	}
	if !slices.Equal(ids, []string{"sim://3", "sim://4"}) {
		t.Fatalf("kept instances %v, want sim://3 and sim://4", ids)
	}
	if got := srvLines(t, s, false); len(got) != 2 || !strings.HasSuffix(got[1], "exiting with code 3") {
		t.Errorf("newest instance %q", got)
	}
	if got := srvLines(t, s, true); len(got) != 2 || !strings.Contains(got[0], "(sim://3)") || !strings.HasSuffix(got[1], "exiting with code 2") {
		t.Errorf("previous instance %q", got)
	}
}

// srvNode returns a node that is not run, on a fake clock at srvT0.
func srvNode(t *testing.T) (*Node, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(srvT0)
	opts := DefaultOptions("n1")
	opts.Clock = clk
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	return n, clk
}

// srvReported records that the node's report loop went round at t.
func srvReported(n *Node, at time.Time) {
	n.rep.mu.Lock()
	n.rep.lastReport = at
	n.rep.mu.Unlock()
}

// srvBusy records that the node's pods loop began its round at t (zero:
// between rounds).
func srvBusy(n *Node, since time.Time) {
	n.mu.Lock()
	n.podsSince = since
	n.mu.Unlock()
}

// TestNodeHealthy: a node is unhealthy until its report loop first went
// round, and once that was more than 2 minutes ago, or its pods loop has
// been in one round for more than 2 minutes; exactly 2 minutes is still
// healthy.
func TestNodeHealthy(t *testing.T) {
	n, clk := srvNode(t)
	if err := n.healthy(); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("before any report: %v", err)
	}
	srvReported(n, srvT0)
	for _, c := range []struct {
		after   time.Duration
		healthy bool
	}{{0, true}, {time.Minute, true}, {2 * time.Minute, true}, {2*time.Minute + time.Second, false}} {
		clk.SetTime(srvT0.Add(c.after))
		if err := n.healthy(); (err == nil) != c.healthy {
			t.Errorf("report loop ran %v ago: %v", c.after, err)
		} else if err != nil && !strings.Contains(err.Error(), "status loop last ran 2m1s ago") {
			t.Errorf("report loop ran %v ago: %v", c.after, err)
		}
	}
	for _, c := range []struct {
		busy    time.Duration
		healthy bool
	}{{time.Second, true}, {time.Minute, true}, {2 * time.Minute, true}, {2*time.Minute + time.Second, false}} {
		now := srvT0.Add(time.Hour)
		clk.SetTime(now)
		srvReported(n, now)
		srvBusy(n, now.Add(-c.busy))
		if err := n.healthy(); (err == nil) != c.healthy {
			t.Errorf("pods loop busy for %v: %v", c.busy, err)
		} else if err != nil && !strings.Contains(err.Error(), "pods loop has been busy for 2m1s") {
			t.Errorf("pods loop busy for %v: %v", c.busy, err)
		}
	}
	srvBusy(n, time.Time{})
	if err := n.healthy(); err != nil {
		t.Errorf("between rounds: %v", err)
	}
}

// srvGet serves a GET of path by h and returns the status and body.
func srvGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code, w.Body.String()
}

// TestHandlerHealthz: /healthz answers 200 "ok" for a healthy node and 500
// with the reason otherwise.
func TestHandlerHealthz(t *testing.T) {
	n, clk := srvNode(t)
	h := n.handler()
	if code, body := srvGet(t, h, "/healthz"); code != http.StatusInternalServerError || !strings.Contains(body, "not started") {
		t.Errorf("before any report: %d %q", code, body)
	}
	srvReported(n, srvT0)
	if code, body := srvGet(t, h, "/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("healthy: %d %q", code, body)
	}
	clk.Step(3 * time.Minute)
	if code, body := srvGet(t, h, "/healthz"); code != http.StatusInternalServerError || !strings.Contains(body, "status loop last ran 3m0s ago") {
		t.Errorf("report loop stuck: %d %q", code, body)
	}
}

// TestHandlerContainerLogs: /containerLogs/<ns>/<pod>/<container> answers
// the newest instance's output as text/plain, one line per line;
// ?previous=true the instance before; anything else of previous is the
// newest; 404 when there is no such output.
func TestHandlerContainerLogs(t *testing.T) {
	n, _ := srvNode(t)
	pod := srvPod("web")
	n.logs.record(pod, srvStarted("sim://1"), srvT0)
	n.logs.record(pod, srvExited("sim://1", 1), srvT0.Add(time.Second))
	n.logs.record(pod, srvStarted("sim://2"), srvT0.Add(time.Minute))
	h := n.handler()
	newest := "2026-12-01T10:01:00Z nodestate: container app of pod default/web started (sim://2)\n"
	previous := "2026-12-01T10:00:00Z nodestate: container app of pod default/web started (sim://1)\n" +
		"2026-12-01T10:00:01Z nodestate: container app exiting with code 1\n"
	for path, want := range map[string]string{
		"/containerLogs/default/web/app":                newest,
		"/containerLogs/default/web/app?previous=false": newest,
		"/containerLogs/default/web/app?previous=true":  previous,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK || w.Body.String() != want || w.Header().Get("Content-Type") != "text/plain" {
			t.Errorf("%s: %d %q (%s), want %q", path, w.Code, w.Body.String(), w.Header().Get("Content-Type"), want)
		}
	}
	for _, path := range []string{"/containerLogs/default/web/other", "/containerLogs/default/gone/app",
		"/containerLogs/other/web/app"} {
		if code, body := srvGet(t, h, path); code != http.StatusNotFound || !strings.Contains(body, "is not available") {
			t.Errorf("%s: %d %q", path, code, body)
		}
	}
}

// TestHandlerMetrics: /metrics exposes the node's registry, its name in
// kubelet_node_name among it.
func TestHandlerMetrics(t *testing.T) {
	n, _ := srvNode(t)
	code, body := srvGet(t, n.handler(), "/metrics")
	if code != http.StatusOK || !strings.Contains(body, `kubelet_node_name{node="n1"} 1`) ||
		!strings.Contains(body, `nodestate_events_total{outcome="dropped_invalid"} 0`) {
		t.Errorf("%d %q", code, body)
	}
}

// TestSelfSigned: the node's serving certificate is a self-signed
// certificate for system:node:<name>, for server authentication, valid
// from an hour ago for a year, with the name as DNS name and the address
// as IP address when it is one, signed by the P-256 key it comes with.
func TestSelfSigned(t *testing.T) {
	before := time.Now()
	c, err := selfSigned("n1", "10.1.2.3")
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificate) != 1 {
		t.Fatalf("%d certificates", len(c.Certificate))
	}
	cert, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.DNSNames, []string{"n1"}) {
		t.Errorf("subject %q, DNS names %v", cert.Subject.CommonName, cert.DNSNames)
	}
	if len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("10.1.2.3")) {
		t.Errorf("IP addresses %v", cert.IPAddresses)
	}
	if from := before.Add(-time.Hour).Truncate(time.Second); cert.NotBefore.Before(from) || cert.NotBefore.After(after.Add(-time.Hour)) {
		t.Errorf("valid from %v, want an hour before %v", cert.NotBefore, before)
	}
	if until := before.Add(365 * 24 * time.Hour).Truncate(time.Second); cert.NotAfter.Before(until) || cert.NotAfter.After(after.Add(365*24*time.Hour)) {
		t.Errorf("valid until %v, want a year after %v", cert.NotAfter, before)
	}
	if cert.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("key usage %v, extended %v", cert.KeyUsage, cert.ExtKeyUsage)
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	key, ok := c.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(cert.PublicKey) || key.Curve.Params().Name != "P-256" {
		t.Errorf("private key %T does not match the certificate's", c.PrivateKey)
	}
	// A host name as address gives no IP address.
	c, err = selfSigned("n2", "node-2.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificate) != 1 {
		t.Fatalf("with a host name: %d certificates", len(c.Certificate))
	}
	if cert, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
		t.Fatal(err)
	}
	if len(cert.IPAddresses) != 0 || !slices.Equal(cert.DNSNames, []string{"n2"}) {
		t.Errorf("with a host name: IP addresses %v, DNS names %v", cert.IPAddresses, cert.DNSNames)
	}
}
