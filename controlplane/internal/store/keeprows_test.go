package store

import (
	"reflect"
	"slices"
	"testing"
)

// TestKeepRows checks that keepRows keeps the rows its predicate accepts, in order, returns
// the input itself when it keeps them all, and never writes to the input, which a retried
// transaction reads again.
func TestKeepRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		drop []int32 // attempt numbers dropped
		want []int32
	}{
		{"all kept", nil, []int32{1, 2, 3, 4}},
		{"first dropped", []int32{1}, []int32{2, 3, 4}},
		{"middle dropped", []int32{2, 3}, []int32{1, 4}},
		{"last dropped", []int32{4}, []int32{1, 2, 3}},
		{"all dropped", []int32{1, 2, 3, 4}, []int32{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rows := []ResultRow{{AttemptNumber: 1}, {AttemptNumber: 2}, {AttemptNumber: 3}, {AttemptNumber: 4}}
			before := slices.Clone(rows)
			calls := 0
			got := keepRows(rows, func(r *ResultRow) bool {
				calls++
				return !slices.Contains(c.drop, r.AttemptNumber)
			})
			attempts := []int32{}
			for _, r := range got {
				attempts = append(attempts, r.AttemptNumber)
			}
			if !slices.Equal(attempts, c.want) {
				t.Errorf("kept attempts %v, want %v", attempts, c.want)
			}
			if calls != len(rows) {
				t.Errorf("predicate called %d times, want once per row (%d)", calls, len(rows))
			}
			if !reflect.DeepEqual(rows, before) {
				t.Errorf("input changed: %v, was %v", rows, before)
			}
			if same := len(got) > 0 && &got[0] == &rows[0]; same != (len(c.drop) == 0) {
				t.Errorf("returned the input itself: %v; want %v", same, len(c.drop) == 0)
			}
		})
	}
}
