package kube

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	ndftypes "k8s.io/component-helpers/nodedeclaredfeatures/types"

	"github.com/nodestate/nodestate/kubeversion"
)

// gatesOn are the feature gates a node declared features on are read from,
// on by default in the Kubernetes minor given (kube_features.go); every
// other gate the declared features name is off in 1.33 to 1.37.
var gatesOn = map[string]kubeversion.Version{
	"RestartAllContainersOnContainerExits":    kubeversion.V1_36,
	"InPlacePodLevelResourcesVerticalScaling": kubeversion.V1_36,
	"InPlacePodVerticalScalingInitContainers": kubeversion.V1_36,
	"ExtendWebSocketsToKubelet":               kubeversion.V1_36,
}

// minorGates answers the declared features' gate questions for one minor.
type minorGates kubeversion.Version

func (g minorGates) Enabled(key string) bool {
	since, ok := gatesOn[key]
	return ok && kubeversion.Version(g).AtLeast(since)
}

// declaredFeatures is the kubelet's status.declaredFeatures for minor v:
// what the node declared features framework of component-helpers
// discovers from v's default gates, sorted by name; none before 1.36, when
// NodeDeclaredFeatures was off. The zero Version is 1.37.
func declaredFeatures(v kubeversion.Version) []string {
	if !v.Valid() {
		v = kubeversion.Newest
	}
	if !v.AtLeast(kubeversion.V1_36) {
		return nil
	}
	cfg := &ndftypes.NodeConfiguration{FeatureGates: minorGates(v), Version: version.MustParseGeneric(v.Release())}
	return nodedeclaredfeatures.DefaultFramework.DiscoverNodeFeatures(cfg)
}
