// Package compare is the oracle comparison: the real kubelet of Kubernetes
// v1.37.2 (conformance/oracle's oraclenode, the kubelet's own RunKubelet on
// an in-memory CRI runtime that carries out simruntime's behaviours) and a
// nodestate kube.Node run as two nodes of one real control plane; every
// workload is created twice at the same moment, one copy pinned to each
// node, and what the two nodes write is compared:
//
//   - every pod's status sequence, from a watch: each version normalised
//     (container IDs, pod and host IPs, the namespace, pod name, UID and node
//     in messages replaced; times taken aside, relative to the pod's
//     creation), consecutive equal versions merged into distinct statuses,
//     and the two sequences aligned, equal statuses matching;
//   - every pod's events, as sets of (type, reason, field path, message,
//     source) with their counts;
//   - the two Node objects, field by field, at the end.
//
// The comparison allows what timing makes differ and nothing else
// (Tolerances): a status one node shows for less than 2 s, as the other
// node's status manager may have written it and its successor at once; 2 s
// between matching changes, measured from the change before them; and half
// of a wait the pod worker jitters (a back-off, an error requeue) for the
// change that ends it. Every other difference is either documented (Known,
// docs/faithfulness.md) or fails the comparison.
//
// Some of the kubelet's waits are chance (the pod worker's jittered
// requeue, which of many pods it syncs first), so a workload can run two
// ways on the real kubelet itself. With a baseline (Config.Baseline) a
// second oracle node runs every workload a third time: a workload whose
// nodestate copy differs from the first kubelet's is explained when it
// equals the second kubelet's, or when every way it differs is a way the
// second kubelet's copy differs from the first too (the same field with
// the same values, a status shown by one run alone with the same fields,
// an event counted otherwise); the rest are undocumented differences.
//
// Workloads lists the named workloads, Generated draws generated pods from
// podlifecycletest's generators. make oracle runs them all and prints the
// report (cmd/oraclecompare); make test runs the CI subset (TestOracle).
package compare
