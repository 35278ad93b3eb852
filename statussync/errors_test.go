package statussync_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// TestErrors: every error unwraps to a sentinel of docs/conventions.md
// section 3 and names the package once.
func TestErrors(t *testing.T) {
	cache := newCache(t, statussync.DefaultOptions())
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "default", UID: "u1"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}}
	_, _, err := cache.SetPodStatus(pod, v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "ghost"}}}, epoch)
	const want = `statussync: pod default/p1 (uid "u1") container "ghost": unknown container`
	if err == nil || err.Error() != want || !errors.Is(err, statussync.ErrInvalidInput) || !errors.Is(err, statussync.ErrUnknownContainer) {
		t.Errorf("got %v, want %q wrapping ErrInvalidInput and ErrUnknownContainer", err, want)
	}
	_, err = statussync.NewEngine(statussync.EngineOptions{}, cache, statussynctest.NewAPI(1))
	var oe *statussync.OptionError
	if !errors.Is(err, statussync.ErrInvalidOptions) || !errors.As(err, &oe) || oe.Field != "FullSyncPeriod" || strings.Count(err.Error(), "statussync:") != 1 {
		t.Errorf("zero EngineOptions: %v", err)
	}
	if _, err := statussync.NewPlanner(statussync.DefaultPlannerOptions(), nil); !errors.Is(err, statussync.ErrInvalidOptions) {
		t.Errorf("a nil cache: %v", err)
	}
	if err := (&statussync.Engine{}).Run(context.Background()); !errors.Is(err, statussync.ErrNotInitialized) {
		t.Errorf("Run of a zero Engine: %v", err)
	}
	if _, _, err := (&statussync.Cache{}).SetPodStatus(pod, v1.PodStatus{}, epoch); !errors.Is(err, statussync.ErrNotInitialized) {
		t.Errorf("SetPodStatus of a zero Cache: %v", err)
	}
	for _, st := range []struct {
		what        string
		api, merged *v1.PodStatus
	}{{"both", nil, nil}, {"the API status", nil, &v1.PodStatus{}}, {"the merged status", &v1.PodStatus{}, nil}} {
		if _, _, err := statussync.Patch("u", "", st.api, st.merged); !errors.Is(err, statussync.ErrInvalidInput) {
			t.Errorf("Patch with %s nil: %v, want ErrInvalidInput", st.what, err)
		}
	}
	const wantOpt = "statussync: invalid options: FullSyncPeriod 0s: must be positive"
	if err == nil || err.Error() != wantOpt {
		t.Errorf("OptionError names the option, its value and what is wrong: got %v, want %q", err, wantOpt)
	}
	// OptionError.Unwrap: ErrInvalidOptions and, when set, Err; nothing else.
	for _, tc := range []struct {
		what string
		e    *statussync.OptionError
		want int
	}{{"without Err", &statussync.OptionError{Field: "x"}, 1}, {"nil", nil, 1}, {"with Err", &statussync.OptionError{Field: "x", Err: errors.New("cause")}, 2}} {
		if u := tc.e.Unwrap(); len(u) != tc.want || u[0] != statussync.ErrInvalidOptions || slices.Contains(u, nil) {
			t.Errorf("OptionError.Unwrap %s: %v, want ErrInvalidOptions and, when set, Err", tc.what, u)
		}
	}
	if got := (*statussync.OptionError)(nil).Error(); got != "statussync: invalid options" {
		t.Errorf("a nil *OptionError: %q", got)
	}
}
