// Package conformance compares nodestate with the upstream Kubernetes code it
// reimplements, on generated inputs. It has no API: its tests are the
// product.
package conformance
