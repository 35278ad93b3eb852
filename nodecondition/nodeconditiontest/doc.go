// Package nodeconditiontest helps test code built on nodecondition: rapid
// generators of heartbeat schedules, signal series, tolerations and whole
// simulation scenarios, and checks of the invariants every node-health
// timeline must satisfy.
//
// Generators:
//   - Outages, ShortOutages: heartbeat schedules, as spans in which a kubelet,
//     its lease or its status reports stop;
//   - HeartbeatNode, Scenario: nodes and whole scenarios for simulation.Simulate;
//   - MemorySeries, Sample: eviction-signal series and single samples;
//   - Health: kubelet health inputs (runtime and network errors);
//   - Tolerations, Pods: pod tolerations for the not-ready and unreachable taints, and pods carrying them.
//
// Checks, each returning a descriptive error or nil, so that a downstream
// test can run them on its own timelines:
//   - CheckOrdered: entries are in time order;
//   - CheckNoEarlyEviction: no pod is deleted before its tolerations allow;
//   - CheckNeverUnknown: a node whose heartbeats never pause longer than the
//     grace period less a monitor period (MaxHeartbeatGap) is never marked Unknown;
//   - CheckRecovery: Ready True removes the not-ready and unreachable NoExecute taints by the next monitor pass;
//   - CheckNoEvictionInFullDisruption: while every zone is FullDisruption no NoExecute taint is added and no pod deleted;
//   - CheckExclusiveNoExecute: a node never carries both the not-ready and the unreachable NoExecute taints;
//   - CheckConditionUpdate: LastTransitionTime moves exactly when a condition's status flips;
//   - CheckTimeline: all the timeline checks at once.
package nodeconditiontest
