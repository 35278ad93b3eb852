package statussync_test

import (
	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

var _ statussync.Transport = (*statussynctest.API)(nil)
