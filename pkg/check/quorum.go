package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Quorum is a check's region_quorum: how many of the regions reporting a run must fail for the
// run to fail. It is "majority" (more failing than passing regions, a tie passes: the rule
// before the field existed and the default), "any" (one failing region), "all" (every
// reporting region failed) or a count of failing regions, kept as its decimal text ("2") and
// written in the API as an integer.
type Quorum string

// The named quorums.
const (
	QuorumMajority Quorum = "majority"
	QuorumAny      Quorum = "any"
	QuorumAll      Quorum = "all"
)

// QuorumCount is the quorum of n failing regions.
func QuorumCount(n int) Quorum { return Quorum(strconv.Itoa(n)) }

// Count returns the quorum's count of failing regions, and whether it is a count at all.
func (q Quorum) Count() (int, bool) {
	n, err := strconv.Atoi(string(q))
	return n, err == nil
}

// Fails reports whether a run in which passed regions passed and failed regions failed is a
// failing run under q. A run with no failing region never fails; an unknown quorum (a stored
// value this version does not know) judges as the majority.
func (q Quorum) Fails(passed, failed int) bool {
	if failed == 0 {
		return false
	}
	switch q {
	case QuorumAny:
		return true
	case QuorumAll:
		return passed == 0
	}
	if n, ok := q.Count(); ok {
		return failed >= n
	}
	return failed > passed
}

// MarshalJSON writes a count as an integer and the named quorums as strings.
func (q Quorum) MarshalJSON() ([]byte, error) {
	if n, ok := q.Count(); ok {
		return []byte(strconv.Itoa(n)), nil
	}
	return json.Marshal(string(q))
}

// UnmarshalJSON reads "majority", "any", "all" or an integer; ranges are Validate's to judge.
func (q *Quorum) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch Quorum(s) {
		case QuorumMajority, QuorumAny, QuorumAll:
			*q = Quorum(s)
			return nil
		}
		return fmt.Errorf("unknown quorum %q", s)
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*q = QuorumCount(n)
	return nil
}

// validateQuorum: a named quorum, or a count from 1 to the number of test regions (a larger
// count could never be reached, so the check could never go DOWN). The empty quorum of a Spec
// built without Defaults judges as the majority.
func validateQuorum(fe *FieldErrors, q Quorum, regions []string) {
	switch q {
	case "", QuorumMajority, QuorumAny, QuorumAll:
		return
	}
	n, ok := q.Count()
	switch {
	case !ok:
		fe.add("region_quorum", `must be "majority", "any", "all" or an integer count of failing regions`)
	case n < 1:
		fe.add("region_quorum", "must be at least 1 failing region")
	case n > len(regions):
		fe.add("region_quorum", "must be at most the number of test_regions (%d), or no run could ever fail", len(regions))
	}
}
