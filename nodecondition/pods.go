package nodecondition

import (
	v1 "k8s.io/api/core/v1"
)

// UpsertPod records a pod as the pod informer shows it: its node, its Ready
// condition and its tolerations. It returns true when the pod workers would
// mark it not ready at once (bound to a node whose Ready is not True, with a
// Ready condition that is not False). A nil or unnamed pod, or a zero
// Controller, changes nothing and gives false.
func (c *Controller) UpsertPod(pod *v1.Pod) bool {
	if !c.initialized() || pod == nil || pod.Name == "" {
		return false
	}
	key := PodKey{pod.Namespace, pod.Name}
	p, ok := c.pods[key]
	if ok && p.ref.Node != pod.Spec.NodeName {
		c.unbind(p)
	}
	if !ok {
		p = &podRecord{}
		c.pods[key] = p
	}
	oldNode := p.ref.Node
	p.ref = PodRef{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName}
	p.tols = append(p.tols[:0], pod.Spec.Tolerations...)
	p.readyKnown = false
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			p.readyKnown, p.ready = true, pod.Status.Conditions[i].Status
		}
	}
	n := c.nodes[p.ref.Node]
	if n == nil {
		return false
	}
	if !ok || oldNode != p.ref.Node {
		n.pods = append(n.pods, p)
	}
	r := readyOf(n.conds)
	return (r == nil || r.Status != v1.ConditionTrue) && p.readyKnown && p.ready != v1.ConditionFalse
}

// DeletePod forgets a pod.
func (c *Controller) DeletePod(ns, name string) {
	if !c.initialized() {
		return
	}
	if p, ok := c.pods[PodKey{ns, name}]; ok {
		c.unbind(p)
		delete(c.pods, PodKey{ns, name})
	}
}

func (c *Controller) unbind(p *podRecord) {
	n := c.nodes[p.ref.Node]
	if n == nil {
		return
	}
	for i, q := range n.pods {
		if q == p {
			n.pods[i] = n.pods[len(n.pods)-1]
			n.pods = n.pods[:len(n.pods)-1]
			return
		}
	}
}

// MarkPodsNotReadyFailed tells the controller that setting the pods of node
// not ready failed; later passes retry while the node's Ready is not True.
func (c *Controller) MarkPodsNotReadyFailed(node string) {
	if !c.initialized() {
		return
	}
	if n, ok := c.nodes[node]; ok {
		n.retryPodsNotReady = true
	}
}

func (c *Controller) markPods(n *nodeRecord) {
	for _, p := range n.pods {
		if p.readyKnown && p.ready != v1.ConditionFalse {
			c.pass.PodsNotReady = append(c.pass.PodsNotReady, p.ref)
		}
	}
}

// podsOf calls fn for each pod bound to node, with its tolerations (owned
// by the Controller: fn must not keep them).
func (c *Controller) podsOf(node string, fn func(PodRef, []v1.Toleration)) {
	if n, ok := c.nodes[node]; ok {
		for _, p := range n.pods {
			fn(p.ref, p.tols)
		}
	}
}

// pod returns a known pod's node and tolerations (owned by the Controller).
func (c *Controller) pod(key PodKey) (PodRef, []v1.Toleration, bool) {
	p, ok := c.pods[key]
	if !ok {
		return PodRef{}, nil, false
	}
	return p.ref, p.tols, true
}

// podNotReady records that a pod's Ready condition was written False, as the
// pod informer would show it next.
func (c *Controller) podNotReady(key PodKey) {
	if p, ok := c.pods[key]; ok && p.readyKnown {
		p.ready = v1.ConditionFalse
	}
}
