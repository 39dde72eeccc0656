package check

import (
	"fmt"
	"regexp"
	"slices"
)

// ExampleDependency is the dependency of Example's checks: tests that store them create a
// heartbeat with this id first.
const ExampleDependency = "0190a0b0-0000-7000-8000-00000000d001"

// MaxDependencies is how many checks and heartbeats a check may depend on.
const MaxDependencies = 20

// canonicalUUID is the lowercase UUID form the API renders ids in.
var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// validateDependsOn: canonical UUIDs (the ids of checks or heartbeats of the organization, which
// the store verifies along with cycles), each once.
func validateDependsOn(fe *FieldErrors, ids []string) {
	if len(ids) > MaxDependencies {
		fe.add("depends_on", "must have at most %d items", MaxDependencies)
		return
	}
	for i, id := range ids {
		if !canonicalUUID.MatchString(id) {
			fe.add(fmt.Sprintf("depends_on[%d]", i), "must be the id of a check or a heartbeat (a lowercase UUID)")
		} else if slices.Index(ids, id) < i {
			fe.add(fmt.Sprintf("depends_on[%d]", i), "repeats %s", id)
		}
	}
}
