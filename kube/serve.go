package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/podlifecycle"
)

// nodeMetrics are the series a Node exports on /metrics: the kubelet's names
// where the kubelet has one, nodestate_ ones for what it lacks.
type nodeMetrics struct {
	reg               *prometheus.Registry
	runningPods       prometheus.Gauge
	runningContainers *prometheus.GaugeVec
	startedPods       prometheus.Counter
	startedContainers *prometheus.CounterVec
	podStart          prometheus.Histogram
	statusSync        prometheus.Histogram
	requests          *prometheus.CounterVec
	backoffs          *prometheus.CounterVec
	admissions        *prometheus.CounterVec
}

func newNodeMetrics(n *Node) *nodeMetrics {
	m := &nodeMetrics{reg: prometheus.NewRegistry()}
	m.runningPods = prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_running_pods",
		Help: "Number of pods that have a running pod sandbox"})
	m.runningContainers = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubelet_running_containers",
		Help: "Number of containers currently running"}, []string{"container_state"})
	m.startedPods = prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_started_pods_total",
		Help: "Cumulative number of pods started"})
	m.startedContainers = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_started_containers_total",
		Help: "Cumulative number of containers started"}, []string{"container_type"})
	m.podStart = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_pod_start_duration_seconds",
		Help:    "Duration in seconds from the node seeing a pod for the first time to the pod starting to run",
		Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}})
	m.statusSync = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_pod_status_sync_duration_seconds",
		Help:    "Duration in seconds to sync a pod status update, from the change to the API server accepting it",
		Buckets: []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nodestate_status_requests_total",
		Help: "Pod status API requests of the status engine, by verb and result"}, []string{"verb", "result"})
	m.backoffs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nodestate_backoff_events_total",
		Help: "BackOff events recorded, by back-off (crashloop, imagepull)"}, []string{"backoff"})
	m.admissions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nodestate_pod_admissions_total",
		Help: "Pods the node admitted or rejected, by result and reason"}, []string{"result", "reason"})
	nodeName := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_node_name",
		Help: "The node's name. The count is always 1.", ConstLabels: prometheus.Labels{"node": n.opts.Name}})
	nodeName.Set(1)
	m.reg.MustRegister(m.runningPods, m.runningContainers, m.startedPods, m.startedContainers, m.podStart,
		m.statusSync, m.requests, m.backoffs, m.admissions, nodeName, &eventCollector{n: n})
	return m
}

var eventsDesc = prometheus.NewDesc("nodestate_events_total",
	"Events recorded by the node, by outcome (created, patched, aggregated, retried, dropped_spam, dropped_rejected, dropped_retry_limit, dropped_queue_full, dropped_invalid)", []string{"outcome"}, nil)

// eventCollector reads the broadcaster's counts at scrape time.
type eventCollector struct{ n *Node }

func (c *eventCollector) Describe(ch chan<- *prometheus.Desc) { ch <- eventsDesc }

func (c *eventCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.n.bcast.Stats()
	counts := map[string]uint64{"dropped_invalid": st.DroppedInvalid}
	for _, s := range st.Sinks {
		counts["created"] += s.Created
		counts["patched"] += s.Patched
		counts["aggregated"] += s.Aggregated
		counts["retried"] += s.Retries
		counts["dropped_spam"] += s.DroppedSpam
		counts["dropped_rejected"] += s.DroppedRejected
		counts["dropped_retry_limit"] += s.DroppedRetryLimit
		counts["dropped_queue_full"] += s.DroppedQueueFull
	}
	for outcome, v := range counts {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(v), outcome)
	}
}

// observeResult updates the metrics from one sync of a pod.
func (m *nodeMetrics) observeResult(p *nodePod, res *podlifecycle.Result, now time.Time) {
	for _, a := range res.Actions {
		if a.Kind == podlifecycle.CreateSandbox {
			m.startedPods.Inc()
		}
	}
	for _, e := range res.Events {
		switch {
		case e.Reason == podlifecycle.ReasonStarted:
			kind := "container"
			if strings.HasPrefix(e.FieldPath, "spec.initContainers") {
				kind = "init_container"
			}
			m.startedContainers.WithLabelValues(kind).Inc()
		case e.Reason == podlifecycle.ReasonBackOff && e.Type == corev1.EventTypeWarning:
			m.backoffs.WithLabelValues("crashloop").Inc()
		case e.Reason == podlifecycle.ReasonBackOff:
			m.backoffs.WithLabelValues("imagepull").Inc()
		}
	}
	for i := range res.Statuses {
		if res.Statuses[i].Phase == corev1.PodRunning && !p.startObserved {
			p.startObserved = true
			m.podStart.Observe(now.Sub(p.firstSeen).Seconds())
		}
	}
}

// containerLog is what one container instance wrote.
type containerLog struct {
	id    string
	lines []string
}

// podLogs holds the simulated containers' output of one pod, newest instance
// last per container.
type podLogs struct {
	byContainer map[string][]*containerLog
}

// logStore is the output of every pod's simulated containers, read by the
// HTTP server while the loop writes it.
type logStore struct {
	mu   sync.Mutex
	pods map[types.NamespacedName]*podLogs
}

// maxInstancesKept bounds the instances whose output is kept per container.
const maxInstancesKept = 2

func (s *logStore) record(pod *corev1.Pod, o podlifecycle.Observation, now time.Time) {
	at := o.At
	if at.IsZero() {
		at = now
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl := s.pods[key]
	if pl == nil {
		pl = &podLogs{byContainer: map[string][]*containerLog{}}
		s.pods[key] = pl
	}
	stamp := at.UTC().Format(time.RFC3339Nano) + " "
	list := pl.byContainer[o.Container]
	switch o.Kind {
	case podlifecycle.ContainerStarted:
		list = append(list, &containerLog{id: o.ContainerID, lines: []string{stamp + fmt.Sprintf("nodestate: container %s of pod %s/%s started (%s)", o.Container, pod.Namespace, pod.Name, o.ContainerID)}})
		if len(list) > maxInstancesKept {
			list = list[len(list)-maxInstancesKept:]
		}
	case podlifecycle.ContainerExited:
		for _, l := range list {
			if l.id == o.ContainerID {
				l.lines = append(l.lines, stamp+fmt.Sprintf("nodestate: container %s exiting with code %d", o.Container, o.ExitCode))
			}
		}
	}
	pl.byContainer[o.Container] = list
}

func (s *logStore) forget(pod *corev1.Pod) {
	s.mu.Lock()
	delete(s.pods, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	s.mu.Unlock()
}

// get returns the output of the newest instance, or with previous the one
// before it.
func (s *logStore) get(ns, pod, container string, previous bool) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pl := s.pods[types.NamespacedName{Namespace: ns, Name: pod}]
	if pl == nil {
		return nil, false
	}
	list := pl.byContainer[container]
	i := len(list) - 1
	if previous {
		i--
	}
	if i < 0 {
		return nil, false
	}
	return append([]string(nil), list[i].lines...), true
}

// handler serves what the API server and a scraper ask of a node:
// /healthz, /metrics and /containerLogs/<namespace>/<pod>/<container>
// (kubectl logs, with ?previous=true for the instance before).
func (n *Node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := n.healthy(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		lines, ok := n.logs.get(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), r.URL.Query().Get("previous") == "true")
		if !ok {
			http.Error(w, fmt.Sprintf("container %q in pod %q is not available", r.PathValue("container"), r.PathValue("pod")), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		for _, l := range lines {
			_, _ = w.Write([]byte(l + "\n"))
		}
	})
	return mux
}

// healthy says whether the node's loops are alive: the report loop went
// round recently, and the pods loop is not stuck in one round.
func (n *Node) healthy() error {
	last := n.rep.last()
	n.mu.Lock()
	busy := n.podsSince
	n.mu.Unlock()
	if last.IsZero() {
		return errors.New("the node has not started")
	}
	if d := n.clock.Since(last); d > 2*time.Minute {
		return fmt.Errorf("the node's status loop last ran %v ago", d.Round(time.Second))
	}
	if !busy.IsZero() {
		if d := n.clock.Since(busy); d > 2*time.Minute {
			return fmt.Errorf("the node's pods loop has been busy for %v", d.Round(time.Second))
		}
	}
	return nil
}

// serve starts the node's HTTPS server on Options.Listen with a
// self-signed certificate for the node's address; stop ends it.
func (n *Node) serve() (stop func(), addr string, err error) {
	cert, err := selfSigned(n.opts.Name, n.opts.Address)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", n.opts.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("kube: node %s: listen on %s: %w", n.opts.Name, n.opts.Listen, err)
	}
	srv := &http.Server{Handler: n.handler(), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeTLS(ln, "", "")
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
		<-done
	}, ln.Addr().String(), nil
}

func selfSigned(name, address string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "system:node:" + name},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{name},
	}
	if ip := net.ParseIP(address); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
