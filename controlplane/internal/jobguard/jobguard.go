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
// region, scheduled time and kind — which a result repeats field for field. An agent can so
// report only on jobs it was sent: a result for a check it never received, for another
// region, or with any of those fields changed has no valid signature.
package jobguard

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// signatureVersion is the first byte of every signature.
const signatureVersion byte = 1

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

// Sign sets job.Signature.
func (g *Guard) Sign(job *vantagev1.CheckJob) {
	job.Signature = sign(g.signing[0], job.GetJobId(), job.GetCheckId(), job.GetOrgId(), job.GetRegion(),
		job.GetScheduledAtUnixMs(), job.GetKind())
}

// VerifyResult reports whether r's job signature is the signature of a job with r's job
// id, check id, organization, region, scheduled time and kind.
func (g *Guard) VerifyResult(r *vantagev1.CheckResult) error {
	got := r.GetJobSignature()
	if len(got) == 0 {
		return ErrUnsigned
	}
	for _, k := range g.signing {
		want := sign(k, r.GetJobId(), r.GetCheckId(), r.GetOrgId(), r.GetRegion(), r.GetScheduledAtUnixMs(), r.GetKind())
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}

// sign is the signature of a job's identity: a version byte and the HMAC of the fields,
// each length-prefixed so that no two identities encode alike.
func sign(key []byte, jobID, checkID, orgID, region string, scheduledAt int64, kind vantagev1.CheckKind) []byte {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	for _, s := range []string{jobID, checkID, orgID, region} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		m.Write(n[:])
		m.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(scheduledAt))
	m.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(kind))
	m.Write(n[:])
	return m.Sum([]byte{signatureVersion})
}
