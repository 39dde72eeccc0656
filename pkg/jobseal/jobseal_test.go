package jobseal

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func key(t *testing.T, region string) Key {
	t.Helper()
	s := make([]byte, KeySize)
	if _, err := rand.Read(s); err != nil {
		t.Fatal(err)
	}
	return Key{Region: region, ID: KeyID(s), Secret: s}
}

func ptr[T any](v T) *T { return &v }

// secretJob is an uptime job carrying a header, credentials and a redact list whose values
// contain "s3cr3t", and a browser job with an env.
func secretJobs() []*vantagev1.CheckJob {
	return []*vantagev1.CheckJob{
		{JobId: "j1", CheckId: "c1", Region: "cloud:eu-west-2", Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME,
			Redact: []string{"s3cr3t-token", "s3cr3t-pw"},
			Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Url: ptr("https://example.com/"), Method: "GET",
				Headers: map[string]string{"Authorization": "Bearer s3cr3t-token"}, AuthUsername: ptr("ops"), AuthPassword: ptr("s3cr3t-pw")}}},
		{JobId: "j2", CheckId: "c2", Region: "cloud:eu-west-2", Kind: vantagev1.CheckKind_CHECK_KIND_BROWSER,
			Redact: []string{"s3cr3t-env"}, Env: map[string]string{"API_KEY": "s3cr3t-env", "PLAIN": "x"},
			Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Script: ptr("test('x', () => {})")}}},
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	k := key(t, "cloud:eu-west-2")
	kr := NewKeyring()
	if err := kr.Set([]Key{k, key(t, "cloud:us-east-1")}); err != nil {
		t.Fatal(err)
	}
	for _, want := range secretJobs() {
		job := proto.CloneOf(want)
		if err := Seal(k, job); err != nil {
			t.Fatal(err)
		}
		wire, err := proto.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(wire, []byte("s3cr3t")) || bytes.Contains(wire, []byte("Authorization")) {
			t.Errorf("job %s: a secret travels in clear: %q", job.JobId, wire)
		}
		if len(job.Redact) != 0 || len(job.Env) != 0 || len(job.Sealed) == 0 {
			t.Errorf("job %s: redact %q env %v sealed %d bytes", job.JobId, job.Redact, job.Env, len(job.Sealed))
		}
		if err := kr.Open(job); err != nil {
			t.Fatalf("open %s: %v", job.JobId, err)
		}
		if !proto.Equal(job, want) {
			t.Errorf("opened job differs:\n got %v\nwant %v", job, want)
		}
		if err := kr.Open(job); err != nil || !proto.Equal(job, want) {
			t.Errorf("opening an opened job again: %v", err)
		}
	}
}

func TestSealNothingSecret(t *testing.T) {
	job := &vantagev1.CheckJob{JobId: "j", CheckId: "c", Region: "cloud:eu-west-2",
		Spec: &vantagev1.CheckJob_Dns{Dns: &vantagev1.DNSSpec{Domain: "example.com"}}}
	if err := Seal(key(t, "cloud:eu-west-2"), job); err != nil || job.Sealed != nil {
		t.Fatalf("a job without secrets: err %v, sealed %d bytes", err, len(job.Sealed))
	}
}

func TestSealDoesNotChangeSharedSpec(t *testing.T) {
	template := secretJobs()[0]
	shared := template.GetHttp()
	job := proto.CloneOf(template)
	job.Spec = template.Spec // the scheduler's jobs share the template's specification
	if err := Seal(key(t, "cloud:eu-west-2"), job); err != nil {
		t.Fatal(err)
	}
	if shared.AuthPassword == nil || len(shared.Headers) != 1 {
		t.Errorf("Seal changed the shared specification: %v", shared)
	}
}

func TestOpenRefusals(t *testing.T) {
	k := key(t, "cloud:eu-west-2")
	sealed := func() *vantagev1.CheckJob {
		job := proto.CloneOf(secretJobs()[0])
		if err := Seal(k, job); err != nil {
			t.Fatal(err)
		}
		return job
	}
	kr := NewKeyring()
	if err := kr.Set([]Key{k}); err != nil {
		t.Fatal(err)
	}
	other := NewKeyring()
	if err := other.Set([]Key{key(t, "cloud:us-east-1")}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		kr      *Keyring
		alter   func(*vantagev1.CheckJob)
		noKey   bool
		message string
	}{
		{name: "keyring of another region", kr: other, noKey: true},
		{name: "moved to another region", kr: kr, alter: func(j *vantagev1.CheckJob) { j.Region = "cloud:us-east-1" }, noKey: true},
		{name: "moved to another check", kr: kr, alter: func(j *vantagev1.CheckJob) { j.CheckId = "c9" }},
		{name: "flipped bit", kr: kr, alter: func(j *vantagev1.CheckJob) { j.Sealed[len(j.Sealed)-1] ^= 1 }},
		{name: "truncated", kr: kr, alter: func(j *vantagev1.CheckJob) { j.Sealed = j.Sealed[:1+KeyIDSize+3] }},
		{name: "unknown version", kr: kr, alter: func(j *vantagev1.CheckJob) { j.Sealed[0] = 9 }},
		{name: "another kind", kr: kr, alter: func(j *vantagev1.CheckJob) {
			j.Spec = &vantagev1.CheckJob_Dns{Dns: &vantagev1.DNSSpec{Domain: "example.com"}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := sealed()
			if tc.alter != nil {
				tc.alter(job)
			}
			err := tc.kr.Open(job)
			if err == nil {
				t.Fatal("opened")
			}
			if errors.Is(err, ErrNoKey) != tc.noKey {
				t.Errorf("err %v, want ErrNoKey %v", err, tc.noKey)
			}
			if len(job.Redact) != 0 {
				t.Errorf("a refused job got secrets: %q", job.Redact)
			}
		})
	}
}
