package compare

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/clock"
)

// version is one version of a pod as the watch delivered it.
type version struct {
	At      time.Time
	Pod     *corev1.Pod
	Deleted bool
}

// history is every version of one pod, from its creation on.
type history struct {
	Namespace, Name string
	UID             types.UID
	// Owner is "<kind>/<name>" of its controller, "" for a bare pod.
	Owner string
	// Created is when the watch first delivered it: the zero of its times.
	Created  time.Time
	Versions []version
}

// recorder keeps the history of every pod in its namespaces, from one
// watch over all namespaces that resumes where it broke off.
type recorder struct {
	client     kubernetes.Interface
	clock      clock.PassiveClock
	namespaces map[string]bool

	mu   sync.Mutex
	pods map[types.UID]*history
	err  error
}

func newRecorder(c kubernetes.Interface, clk clock.PassiveClock, namespaces ...string) *recorder {
	r := &recorder{client: c, clock: clk, namespaces: map[string]bool{}, pods: map[types.UID]*history{}}
	for _, ns := range namespaces {
		r.namespaces[ns] = true
	}
	return r
}

// start lists the pods (none yet, in a fresh namespace) and watches from
// there until ctx ends; it returns once the watch is open.
func (r *recorder) start(ctx context.Context) error {
	list, err := r.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("compare: listing pods: %w", err)
	}
	for i := range list.Items {
		r.observe(&list.Items[i], false)
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return r.client.CoreV1().Pods("").Watch(ctx, o)
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	if err != nil {
		return fmt.Errorf("compare: watching pods: %w", err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				r.handle(ev)
			}
		}
	}()
	return nil
}

func (r *recorder) handle(ev watch.Event) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		if pod, ok := ev.Object.(*corev1.Pod); ok {
			r.observe(pod, ev.Type == watch.Deleted)
		}
	case watch.Error:
		r.mu.Lock()
		r.err = fmt.Errorf("compare: pod watch: %v", errorOf(ev.Object))
		r.mu.Unlock()
	}
}

func errorOf(o runtime.Object) any {
	if s, ok := o.(*metav1.Status); ok {
		return s.Message
	}
	return o
}

func (r *recorder) observe(pod *corev1.Pod, deleted bool) {
	if !r.namespaces[pod.Namespace] {
		return
	}
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.pods[pod.UID]
	if h == nil {
		h = &history{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Created: now}
		if ref := metav1.GetControllerOf(pod); ref != nil {
			h.Owner = ref.Kind + "/" + ref.Name
		}
		r.pods[pod.UID] = h
	}
	h.Versions = append(h.Versions, version{At: now, Pod: pod, Deleted: deleted})
}

// histories returns the histories of namespace's pods, and the watch's
// error if it reported one.
func (r *recorder) histories(namespace string) ([]*history, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*history
	for _, h := range r.pods {
		if h.Namespace == namespace {
			c := *h
			c.Versions = append([]version(nil), h.Versions...)
			out = append(out, &c)
		}
	}
	return out, r.err
}

// events lists namespace's events.
func listEvents(ctx context.Context, c kubernetes.Interface, namespace string) ([]corev1.Event, error) {
	l, err := c.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("compare: listing events of %s: %w", namespace, err)
	}
	return l.Items, nil
}
