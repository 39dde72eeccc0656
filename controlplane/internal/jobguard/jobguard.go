// Package jobguard protects the jobs the control plane sends to agents and the results that
// come back: it signs every job the scheduler publishes, seals the job's secrets for the
// agents of the job's region (pkg/jobseal), hands an agent the keys of the regions its token
// allows, and tells the ingest server whether a result belongs to a job that was published to
// the region it reports for.
//
// Every key is derived here, and only here, from the control plane's secret key
// (VANTAGE_SECRET_KEY) with HKDF-SHA256, so that every replica signs and verifies alike
// without sharing anything else:
//
//	signature key   HKDF(secret, info "vantage job signature v1")
//	region key      HKDF(secret, info "vantage job secrets v1 " + region)
//
// While the secret key is rotated, New takes the previous keys as well: jobs are signed and
// sealed with the current one, and signatures and sealed values of the others stay valid.
//
// A signature is an HMAC-SHA256 over the job's identity — job id, check id, organization,
// region, scheduled time and kind — which a result repeats field for field, and over the job's
// bounds — its deadline, its attempt timeout and its number of attempts — which the signature
// carries in clear ahead of the MAC:
//
//	version 2 (1 byte) | deadline, Unix ms (8) | timeout ms (4) | max attempts (4) | HMAC (32)
//
// An agent can so report only on jobs it was sent: a result for a check it never received,
// for another region, or with any of those fields changed has no valid signature. And since
// agents echo the signature verbatim, every agent, whatever its release, hands the signed
// bounds back with its results: ingest places a result within them (the attempt number, when
// it was checked, whether it came too late) without trusting the agent for any of them.
//
// Version 1 signatures (the identity only, made by the schedulers of earlier releases) are
// still verified, so that the runs queued by an older leader during an upgrade are not lost;
// their bounds are the widest any job of those releases had (LegacyBounds).
package jobguard

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/jobseal"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Signature versions (the first byte of a signature).
const (
	signatureV1 byte = 1 // identity only
	signatureV2 byte = 2 // identity and bounds
)

// v2BoundsSize is the length of the bounds a version 2 signature carries after its version.
const v2BoundsSize = 8 + 4 + 4

// Errors of VerifyResult.
var (
	ErrUnsigned     = errors.New("the result carries no job signature")
	ErrBadSignature = errors.New("the job signature does not match the result: no such job was published to this region")
)

// Guard signs and verifies jobs and seals their secrets. It is safe for concurrent use.
type Guard struct {
	secrets [][]byte // the secret keys, current first
	signing [][]byte // derived signature keys, current first

	mu      sync.Mutex
	regions map[string][]jobseal.Key // derived region keys, current first
}

// New derives the guard's keys from the current secret key and any previous ones that are
// still honoured during a rotation.
func New(current []byte, previous ...[]byte) (*Guard, error) {
	g := &Guard{regions: map[string][]jobseal.Key{}}
	for _, s := range append([][]byte{current}, previous...) {
		if len(s) < 32 {
			return nil, fmt.Errorf("jobguard: secret key of %d bytes, want 32", len(s))
		}
		k, err := derive(s, "vantage job signature v1")
		if err != nil {
			return nil, err
		}
		g.secrets = append(g.secrets, s)
		g.signing = append(g.signing, k)
	}
	return g, nil
}

func derive(secret []byte, info string) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, info, 32)
	if err != nil {
		return nil, fmt.Errorf("jobguard: derive %q: %w", info, err)
	}
	return k, nil
}

// regionKeys returns the keys of region, current first, deriving them once.
func (g *Guard) regionKeys(region string) ([]jobseal.Key, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ks, ok := g.regions[region]; ok {
		return ks, nil
	}
	var ks []jobseal.Key
	for _, s := range g.secrets {
		k, err := derive(s, "vantage job secrets v1 "+region)
		if err != nil {
			return nil, err
		}
		ks = append(ks, jobseal.Key{Region: region, ID: jobseal.KeyID(k), Secret: k})
	}
	g.regions[region] = ks
	return ks, nil
}

// RegionKeys are the keys an agent registered for regions receives: every key of each
// region (current first), so jobs sealed just before a rotation still open.
func (g *Guard) RegionKeys(regions []string) ([]*vantagev1.RegionKey, error) {
	var out []*vantagev1.RegionKey
	for _, r := range regions {
		ks, err := g.regionKeys(r)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			out = append(out, &vantagev1.RegionKey{Region: r, KeyId: slices.Clone(k.ID), Key: slices.Clone(k.Secret)})
		}
	}
	return out, nil
}

// Seal takes the secrets out of template (a check's job without its run's fields, which
// must carry its check id) and returns them sealed once per region, keyed by region; nil
// when the job has no secrets.
func (g *Guard) Seal(template *vantagev1.CheckJob, regions []string) (map[string][]byte, error) {
	secrets := jobseal.Split(template)
	if secrets == nil {
		return nil, nil
	}
	out := make(map[string][]byte, len(regions))
	for _, r := range regions {
		ks, err := g.regionKeys(r)
		if err != nil {
			return nil, err
		}
		if out[r], err = jobseal.SealSecrets(ks[0], template.GetCheckId(), secrets); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Bounds are what a job's signature vouches for beyond the identity its results repeat:
// until when an agent may start the job, how long each attempt may take, and how many
// attempts it has.
type Bounds struct {
	Deadline    time.Time
	Timeout     time.Duration
	MaxAttempts uint32
}

// LegacyBounds are the bounds of a job whose version 1 signature carries none, scheduled at
// scheduled: the widest a job of the releases that made them had — delivered at most
// wire.JobMaxAge after it was queued (a catch-up run up to as long again after its due time),
// attempts of at most check.MaxBrowserTimeoutMs, and two of them.
func LegacyBounds(scheduled time.Time) Bounds {
	return Bounds{Deadline: scheduled.Add(2 * wire.JobMaxAge), Timeout: check.MaxBrowserTimeoutMs * time.Millisecond,
		MaxAttempts: 2}
}

// Sign sets job.Signature, over the job's identity and its bounds (deadline, timeout and max
// attempts).
func (g *Guard) Sign(job *vantagev1.CheckJob) {
	job.Signature = signV2(g.signing[0], identityOf(job), boundsBytes(job))
}

// VerifyResult checks that r's job signature is the signature of a job with r's job id, check
// id, organization, region, scheduled time and kind, and returns the job's signed bounds.
func (g *Guard) VerifyResult(r *vantagev1.CheckResult) (Bounds, error) {
	got := r.GetJobSignature()
	if len(got) == 0 {
		return Bounds{}, ErrUnsigned
	}
	id := identity{jobID: r.GetJobId(), checkID: r.GetCheckId(), orgID: r.GetOrgId(), region: r.GetRegion(),
		scheduledAt: r.GetScheduledAtUnixMs(), kind: r.GetKind()}
	switch {
	case got[0] == signatureV2 && len(got) == 1+v2BoundsSize+sha256.Size:
		bounds := got[1 : 1+v2BoundsSize]
		for _, k := range g.signing {
			if hmac.Equal(got, signV2(k, id, bounds)) {
				return decodeBounds(bounds), nil
			}
		}
	case got[0] == signatureV1:
		for _, k := range g.signing {
			if hmac.Equal(got, signV1(k, id)) {
				return LegacyBounds(time.UnixMilli(id.scheduledAt)), nil
			}
		}
	}
	return Bounds{}, ErrBadSignature
}

// identity is what of a job its results repeat.
type identity struct {
	jobID, checkID, orgID, region string
	scheduledAt                   int64
	kind                          vantagev1.CheckKind
}

func identityOf(job *vantagev1.CheckJob) identity {
	return identity{jobID: job.GetJobId(), checkID: job.GetCheckId(), orgID: job.GetOrgId(), region: job.GetRegion(),
		scheduledAt: job.GetScheduledAtUnixMs(), kind: job.GetKind()}
}

// boundsBytes encodes job's bounds as a version 2 signature carries them.
func boundsBytes(job *vantagev1.CheckJob) []byte {
	b := make([]byte, v2BoundsSize)
	binary.BigEndian.PutUint64(b[0:8], uint64(job.GetDeadlineUnixMs()))
	binary.BigEndian.PutUint32(b[8:12], job.GetTimeoutMs())
	binary.BigEndian.PutUint32(b[12:16], job.GetMaxAttempts())
	return b
}

func decodeBounds(b []byte) Bounds {
	return Bounds{Deadline: time.UnixMilli(int64(binary.BigEndian.Uint64(b[0:8]))),
		Timeout:     time.Duration(binary.BigEndian.Uint32(b[8:12])) * time.Millisecond,
		MaxAttempts: binary.BigEndian.Uint32(b[12:16])}
}

// signV2 is a version 2 signature: the version, the bounds in clear, and the HMAC of both and
// of the identity.
func signV2(key []byte, id identity, bounds []byte) []byte {
	head := append([]byte{signatureV2}, bounds...)
	m := hmac.New(sha256.New, key)
	m.Write(head)
	writeIdentity(m, id)
	return m.Sum(head)
}

// signV1 is a version 1 signature: the version and the HMAC of the identity.
func signV1(key []byte, id identity) []byte {
	m := hmac.New(sha256.New, key)
	writeIdentity(m, id)
	return m.Sum([]byte{signatureV1})
}

// writeIdentity writes the identity's fields, each string length-prefixed so that no two
// identities encode alike.
func writeIdentity(w hash.Hash, id identity) {
	var n [8]byte
	for _, s := range []string{id.jobID, id.checkID, id.orgID, id.region} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		w.Write(n[:])
		w.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(id.scheduledAt))
	w.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(id.kind))
	w.Write(n[:])
}
