package jobguard

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func secretKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func newGuard(t *testing.T, current []byte, previous ...[]byte) *Guard {
	t.Helper()
	g, err := New(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func job() *vantagev1.CheckJob {
	pw := "s3cr3t"
	return &vantagev1.CheckJob{JobId: "0190a000-0000-7000-8000-000000000001", CheckId: "0190a000-0000-7000-8000-000000000002",
		OrgId: "0190a000-0000-7000-8000-000000000003", Region: "cloud:eu-west-2", ScheduledAtUnixMs: 1_780_000_000_000,
		DeadlineUnixMs: 1_780_000_030_000, TimeoutMs: 10_000, MaxAttempts: 2, Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME, Redact: []string{pw},
		Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Method: "GET", AuthPassword: &pw}}}
}

// resultOf is what an agent reports for j: its identity and the signature it was sent.
func resultOf(j *vantagev1.CheckJob) *vantagev1.CheckResult {
	return &vantagev1.CheckResult{JobId: j.JobId, CheckId: j.CheckId, OrgId: j.OrgId, Region: j.Region,
		ScheduledAtUnixMs: j.ScheduledAtUnixMs, Kind: j.Kind, JobSignature: j.Signature}
}

func TestSignatureBindsEveryField(t *testing.T) {
	g := newGuard(t, secretKey(t))
	j := job()
	g.Sign(j)
	if _, err := g.VerifyResult(resultOf(j)); err != nil {
		t.Fatalf("a result of the signed job: %v", err)
	}
	tests := []struct {
		name  string
		alter func(*vantagev1.CheckResult)
		want  error
	}{
		{"unsigned", func(r *vantagev1.CheckResult) { r.JobSignature = nil }, ErrUnsigned},
		{"other job", func(r *vantagev1.CheckResult) { r.JobId = "0190a000-0000-7000-8000-000000000009" }, ErrBadSignature},
		{"forged check", func(r *vantagev1.CheckResult) { r.CheckId = "0190a000-0000-7000-8000-000000000009" }, ErrBadSignature},
		{"other organization", func(r *vantagev1.CheckResult) { r.OrgId = "0190a000-0000-7000-8000-000000000009" }, ErrBadSignature},
		{"other region", func(r *vantagev1.CheckResult) { r.Region = "cloud:us-east-1" }, ErrBadSignature},
		{"other time", func(r *vantagev1.CheckResult) { r.ScheduledAtUnixMs++ }, ErrBadSignature},
		{"other kind", func(r *vantagev1.CheckResult) { r.Kind = vantagev1.CheckKind_CHECK_KIND_TCP }, ErrBadSignature},
		{"flipped bit", func(r *vantagev1.CheckResult) { r.JobSignature[20] ^= 1 }, ErrBadSignature},
		{"later deadline", func(r *vantagev1.CheckResult) { r.JobSignature[8]++ }, ErrBadSignature},
		{"longer timeout", func(r *vantagev1.CheckResult) { r.JobSignature[12]++ }, ErrBadSignature},
		{"more attempts", func(r *vantagev1.CheckResult) { r.JobSignature[16] = 99 }, ErrBadSignature},
		{"downgraded to version 1", func(r *vantagev1.CheckResult) {
			r.JobSignature = append([]byte{1}, r.JobSignature[1+16:]...)
		}, ErrBadSignature},
		{"truncated", func(r *vantagev1.CheckResult) { r.JobSignature = r.JobSignature[:20] }, ErrBadSignature},
		{"length-prefix shift", func(r *vantagev1.CheckResult) {
			r.JobId, r.CheckId = r.JobId+r.CheckId[:1], r.CheckId[1:]
		}, ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := resultOf(j)
			r.JobSignature = bytes.Clone(r.JobSignature)
			tc.alter(r)
			if _, err := g.VerifyResult(r); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignatureCarriesTheJobsBounds(t *testing.T) {
	g := newGuard(t, secretKey(t))
	j := job()
	g.Sign(j)
	got, err := g.VerifyResult(resultOf(j))
	if err != nil {
		t.Fatal(err)
	}
	want := Bounds{Deadline: time.UnixMilli(j.DeadlineUnixMs), Timeout: 10 * time.Second, MaxAttempts: 2}
	if got != want {
		t.Errorf("bounds = %+v, want %+v", got, want)
	}
}

// TestVersion1Signatures: the results of a job an older scheduler signed (identity only)
// are still accepted, within the widest bounds such a job had.
func TestVersion1Signatures(t *testing.T) {
	key := secretKey(t)
	g := newGuard(t, key)
	j := job()
	j.Signature = signV1(g.signing[0], identityOf(j))
	got, err := g.VerifyResult(resultOf(j))
	if err != nil {
		t.Fatalf("a version 1 signature: %v", err)
	}
	if want := LegacyBounds(time.UnixMilli(j.ScheduledAtUnixMs)); got != want {
		t.Errorf("bounds = %+v, want %+v", got, want)
	}
	r := resultOf(j)
	r.ScheduledAtUnixMs++
	if _, err := g.VerifyResult(r); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a version 1 signature of another scheduled time: %v", err)
	}
}

func TestReplicasAgreeAndOtherKeysDoNot(t *testing.T) {
	key := secretKey(t)
	a, b, stranger := newGuard(t, key), newGuard(t, key), newGuard(t, secretKey(t))
	j := job()
	a.Sign(j)
	if _, err := b.VerifyResult(resultOf(j)); err != nil {
		t.Errorf("another replica with the same secret key: %v", err)
	}
	if _, err := stranger.VerifyResult(resultOf(j)); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a control plane with another secret key: %v", err)
	}
}

func TestRotation(t *testing.T) {
	old, cur := secretKey(t), secretKey(t)
	before, during := newGuard(t, old), newGuard(t, cur, old)
	j := job()
	before.Sign(j)
	if _, err := during.VerifyResult(resultOf(j)); err != nil {
		t.Errorf("a job signed before the rotation: %v", err)
	}
	sealed, err := before.Seal(proto.CloneOf(j), []string{j.Region})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := during.RegionKeys([]string{j.Region})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("during a rotation an agent gets %d keys of its region, want 2", len(keys))
	}
	kr := keyring(t, keys)
	opened := proto.CloneOf(j)
	opened.Redact, opened.Spec, opened.Sealed = nil, &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Method: "GET"}}, sealed[j.Region]
	if err := kr.Open(opened); err != nil || opened.GetHttp().GetAuthPassword() != "s3cr3t" {
		t.Errorf("a job sealed before the rotation: %v", err)
	}
}

func keyring(t *testing.T, keys []*vantagev1.RegionKey) *jobseal.Keyring {
	t.Helper()
	var ks []jobseal.Key
	for _, k := range keys {
		ks = append(ks, jobseal.Key{Region: k.Region, ID: k.KeyId, Secret: k.Key})
	}
	kr := jobseal.NewKeyring()
	if err := kr.Set(ks); err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestSealPerRegion(t *testing.T) {
	g := newGuard(t, secretKey(t))
	template := job()
	regions := []string{"cloud:eu-west-2", "cloud:us-east-1"}
	sealed, err := g.Seal(template, regions)
	if err != nil {
		t.Fatal(err)
	}
	if template.GetHttp().AuthPassword != nil || template.Redact != nil {
		t.Fatalf("the template kept its secrets: %v", template)
	}
	euKeys, err := g.RegionKeys([]string{"cloud:eu-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	eu := keyring(t, euKeys)
	for _, r := range regions {
		j := proto.CloneOf(template)
		j.Region, j.Sealed = r, sealed[r]
		err := eu.Open(j)
		switch r {
		case "cloud:eu-west-2":
			if err != nil || j.GetHttp().GetAuthPassword() != "s3cr3t" {
				t.Errorf("the region's own agent: %v", err)
			}
		default:
			if !errors.Is(err, jobseal.ErrNoKey) {
				t.Errorf("an agent of eu-west-2 opened a job of %s: %v", r, err)
			}
		}
	}
}
