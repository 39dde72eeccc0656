package uplink

import (
	"testing"

	"google.golang.org/protobuf/proto"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Browser results with artifacts are large: a batch of them is cut into messages that each
// stay within the limit, in order, losing none; one result over the limit goes alone.
func TestSplitBySize(t *testing.T) {
	t.Parallel()
	result := func(seq uint64, bytes int) *vantagev1.ResultEnvelope {
		return &vantagev1.ResultEnvelope{Seq: seq, Result: &vantagev1.CheckResult{
			Artifacts: []*vantagev1.Artifact{{Name: "a", Body: make([]byte, bytes)}}}}
	}
	buf := []*vantagev1.ResultEnvelope{result(1, 1000), result(2, 1000), result(3, 1000), result(4, 5000), result(5, 10), result(6, 10)}
	parts := splitBySize(buf, 2500)
	var seqs [][]uint64
	for _, p := range parts {
		size := 0
		var s []uint64
		for _, e := range p {
			s = append(s, e.GetSeq())
			size += proto.Size(e)
		}
		if size > 2500 && len(p) > 1 {
			t.Errorf("part %v is %d bytes, over the limit", s, size)
		}
		seqs = append(seqs, s)
	}
	want := [][]uint64{{1, 2}, {3}, {4}, {5, 6}}
	if len(seqs) != len(want) {
		t.Fatalf("parts %v, want %v", seqs, want)
	}
	for i := range want {
		if len(seqs[i]) != len(want[i]) || seqs[i][0] != want[i][0] || seqs[i][len(seqs[i])-1] != want[i][len(want[i])-1] {
			t.Fatalf("parts %v, want %v", seqs, want)
		}
	}
	if one := splitBySize(buf[:1], 10); len(one) != 1 || len(one[0]) != 1 {
		t.Errorf("a lone result over the limit: %v", one)
	}
}
