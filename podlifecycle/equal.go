package podlifecycle

import (
	"github.com/nodestate/nodestate/internal/statuseq"
	v1 "k8s.io/api/core/v1"
)

// statusEqual is equality.Semantic.DeepEqual of two statuses, without
// reflection for the fields the machine, containerstate and podphase fill
// in.
func statusEqual(a, b *v1.PodStatus) bool { return statuseq.Equal(a, b) }
