// Package jobseal keeps a job's secrets out of NATS: the control plane moves them out of the
// job into one value sealed for the agents of the job's region (CheckJob.sealed), and those
// agents — who received the region's key over their authenticated stream — open it and merge
// the secrets back just before probing.
//
// A job's secrets are its request headers, its Basic-auth credentials, the environment of a
// browser script and the list of values to redact: the fields that carry the values of secret
// variables and check passwords. They travel as a CheckJob holding only those fields,
// serialized and sealed with AES-256-GCM:
//
//	version (1 byte) | key id (KeyIDSize bytes) | nonce (12 bytes) | ciphertext and tag
//
// The additional data binds the value to its region and check, so a sealed value cannot be
// moved into another region's or another check's job.
package jobseal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// version is the first byte of every sealed value.
const version byte = 1

// KeyIDSize is the length of a key id.
const KeyIDSize = 8

// KeySize is the length of a region key (AES-256).
const KeySize = 32

// Key is the key of one region.
type Key struct {
	Region string
	ID     []byte // KeyID(Secret)
	Secret []byte // KeySize bytes
}

// KeyID names a key in sealed values without revealing it.
func KeyID(secret []byte) []byte {
	h := sha256.Sum256(append([]byte("vantage jobseal key id\x00"), secret...))
	return h[:KeyIDSize]
}

// ErrNoKey means the value was sealed with a key this keyring does not hold (an agent that has
// not registered yet, or a region it does not serve).
var ErrNoKey = errors.New("jobseal: no key for this job's region")

// Seal moves the secrets out of job into job.Sealed, sealed with k (which must be the key of
// job.Region). It does nothing when the job carries no secrets. job's nested specification
// is replaced by a copy, never changed in place: templates share theirs.
func Seal(k Key, job *vantagev1.CheckJob) error {
	secrets := Split(job)
	if secrets == nil {
		return nil
	}
	sealed, err := SealSecrets(k, job.GetCheckId(), secrets)
	if err != nil {
		return err
	}
	job.Sealed = sealed
	return nil
}

// SealSecrets seals secrets (what Split took out of a job of checkID) for the agents of
// k.Region.
func SealSecrets(k Key, checkID string, secrets *vantagev1.CheckJob) ([]byte, error) {
	if len(k.Secret) != KeySize || len(k.ID) != KeyIDSize {
		return nil, fmt.Errorf("jobseal: key of %s is malformed", k.Region)
	}
	plain, err := proto.Marshal(secrets)
	if err != nil {
		return nil, fmt.Errorf("jobseal: encode secrets: %w", err)
	}
	aead, err := newAEAD(k.Secret)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+KeyIDSize+aead.NonceSize(), 1+KeyIDSize+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = version
	copy(out[1:], k.ID)
	nonce := out[1+KeyIDSize:]
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(out, nonce, plain, additionalData(k.Region, checkID)), nil //nolint:gosec // G407: the nonce was just read from crypto/rand
}

// Split removes the secret fields from job and returns them as a CheckJob of their own, or
// nil when there are none. job's nested specification is replaced by a copy, never changed
// in place.
func Split(job *vantagev1.CheckJob) *vantagev1.CheckJob {
	s := &vantagev1.CheckJob{Redact: job.Redact, Env: job.Env}
	job.Redact, job.Env = nil, nil
	found := len(s.Redact) > 0 || len(s.Env) > 0
	switch spec := job.Spec.(type) {
	case *vantagev1.CheckJob_Http:
		h := spec.Http
		if len(h.Headers) > 0 || h.AuthUsername != nil || h.AuthPassword != nil {
			s.Spec = &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Headers: h.Headers, AuthUsername: h.AuthUsername, AuthPassword: h.AuthPassword}}
			rest := proto.CloneOf(h)
			rest.Headers, rest.AuthUsername, rest.AuthPassword = nil, nil, nil
			job.Spec = &vantagev1.CheckJob_Http{Http: rest}
			found = true
		}
	case *vantagev1.CheckJob_Browser:
		b := spec.Browser
		if len(b.Headers) > 0 || b.AuthUsername != nil || b.AuthPassword != nil {
			s.Spec = &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Headers: b.Headers, AuthUsername: b.AuthUsername, AuthPassword: b.AuthPassword}}
			rest := proto.CloneOf(b)
			rest.Headers, rest.AuthUsername, rest.AuthPassword = nil, nil, nil
			job.Spec = &vantagev1.CheckJob_Browser{Browser: rest}
			found = true
		}
	}
	if !found {
		return nil
	}
	return s
}

// Keyring holds the keys an agent received, by region. It is safe for concurrent use.
type Keyring struct {
	mu   sync.RWMutex
	keys map[string]map[string]cipher.AEAD // region → key id → AEAD
}

// NewKeyring returns an empty keyring.
func NewKeyring() *Keyring { return &Keyring{keys: map[string]map[string]cipher.AEAD{}} }

// Set replaces the keyring's keys with keys (what the control plane sent on registration).
func (r *Keyring) Set(keys []Key) error {
	m := map[string]map[string]cipher.AEAD{}
	for _, k := range keys {
		if len(k.ID) != KeyIDSize {
			return fmt.Errorf("jobseal: key id of %s is %d bytes, want %d", k.Region, len(k.ID), KeyIDSize)
		}
		aead, err := newAEAD(k.Secret)
		if err != nil {
			return fmt.Errorf("jobseal: key of %s: %w", k.Region, err)
		}
		if m[k.Region] == nil {
			m[k.Region] = map[string]cipher.AEAD{}
		}
		m[k.Region][string(k.ID)] = aead
	}
	r.mu.Lock()
	r.keys = m
	r.mu.Unlock()
	return nil
}

// Open merges the sealed secrets of job back into it and clears job.Sealed; a job without
// any is left as it is. It fails with ErrNoKey when the keyring lacks the job's key, and with
// another error when the value does not open (tampered with, or sealed for another region or
// check).
func (r *Keyring) Open(job *vantagev1.CheckJob) error {
	sealed := job.GetSealed()
	if len(sealed) == 0 {
		return nil
	}
	if len(sealed) < 1+KeyIDSize || sealed[0] != version {
		return errors.New("jobseal: sealed secrets of an unknown format")
	}
	r.mu.RLock()
	aead := r.keys[job.GetRegion()][string(sealed[1:1+KeyIDSize])]
	r.mu.RUnlock()
	if aead == nil {
		return ErrNoKey
	}
	body := sealed[1+KeyIDSize:]
	if len(body) < aead.NonceSize() {
		return errors.New("jobseal: sealed secrets are truncated")
	}
	plain, err := aead.Open(nil, body[:aead.NonceSize()], body[aead.NonceSize():], additionalData(job.GetRegion(), job.GetCheckId()))
	if err != nil {
		return errors.New("jobseal: sealed secrets do not open: altered, or sealed for another region or check")
	}
	secrets := &vantagev1.CheckJob{}
	if err := proto.Unmarshal(plain, secrets); err != nil {
		return fmt.Errorf("jobseal: decode secrets: %w", err)
	}
	if secrets.Spec != nil && !sameSpecKind(job, secrets) {
		return errors.New("jobseal: sealed secrets are for another kind of check")
	}
	job.Sealed = nil
	proto.Merge(job, secrets)
	return nil
}

// sameSpecKind reports whether job and secrets carry the same specification kind (Merge
// would otherwise replace the job's specification with the secrets').
func sameSpecKind(job, secrets *vantagev1.CheckJob) bool {
	switch secrets.Spec.(type) {
	case *vantagev1.CheckJob_Http:
		return job.GetHttp() != nil
	case *vantagev1.CheckJob_Browser:
		return job.GetBrowser() != nil
	}
	return false
}

func additionalData(region, checkID string) []byte {
	return []byte("vantage job secrets v1\x00" + region + "\x00" + checkID)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("jobseal: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
