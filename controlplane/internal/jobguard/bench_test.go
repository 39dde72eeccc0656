package jobguard

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// The scheduler signs every job it publishes and seals a plan's secrets once per region (at
// plan build); ingest verifies every result. BenchmarkMarshalJob is the ceiling they are
// compared with: the encoding every published job costs anyway.

func benchJob() *vantagev1.CheckJob {
	j := job()
	j.Spec.(*vantagev1.CheckJob_Http).Http.Headers = map[string]string{"Authorization": "Bearer 0123456789abcdef", "X-Env": "prod"}
	return j
}

func BenchmarkMarshalJob(b *testing.B) {
	j := benchJob()
	for b.Loop() {
		if _, err := proto.Marshal(j); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignJob(b *testing.B) {
	g, _ := New(bytes.Repeat([]byte{1}, 32))
	j := benchJob()
	for b.Loop() {
		g.Sign(j)
	}
}

func BenchmarkVerifyResult(b *testing.B) {
	g, _ := New(bytes.Repeat([]byte{1}, 32))
	j := benchJob()
	g.Sign(j)
	r := resultOf(j)
	for b.Loop() {
		if _, err := g.VerifyResult(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSealPerRegion(b *testing.B) {
	g, _ := New(bytes.Repeat([]byte{1}, 32))
	regions := []string{"cloud:us-east-1"}
	for b.Loop() {
		if _, err := g.Seal(benchJob(), regions); err != nil {
			b.Fatal(err)
		}
	}
}
