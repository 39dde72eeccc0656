// Package check defines what a check is, shared by the control plane and the agent: kinds,
// regions, assertions, per-kind specifications with their limits and defaults, validation, and
// conversion to the wire format.
package check
