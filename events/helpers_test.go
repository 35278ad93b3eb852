package events_test

import (
	"errors"

	k8stypes "k8s.io/apimachinery/pkg/types"
)

func asOptionError(err error, target any) bool { return errors.As(err, target) }

func k8sUID(s string) k8stypes.UID { return k8stypes.UID(s) }
