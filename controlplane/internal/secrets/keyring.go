// Package secrets seals values that Vantage stores encrypted at rest (environment variable
// values, check passwords) with AES-256-GCM under the control plane's secret key.
//
// Rotation: a keyring holds the current key and any previous ones. It seals with the current
// key and opens with whichever key sealed the value, so replicas given the new key (and the old
// one as previous) read everything while `admin reencrypt-secrets` re-seals the stored values.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// version prefixes every sealed value so the format (or key) can be rotated later.
const version byte = 1

// Keyring seals and opens values. It is safe for concurrent use.
type Keyring struct {
	aead     cipher.AEAD   // the current key's
	previous []cipher.AEAD // keys being rotated away from, tried after the current one
	fps      []string      // fingerprints: the current key's first, then the previous ones'
}

// NewKeyring builds a keyring from a 32-byte current key and any previous keys (rotation).
func NewKeyring(key []byte, previous ...[]byte) (*Keyring, error) {
	k := &Keyring{}
	for i, kb := range append([][]byte{key}, previous...) {
		if len(kb) != 32 {
			return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(kb))
		}
		block, err := aes.NewCipher(kb)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			k.aead = aead
		} else {
			k.previous = append(k.previous, aead)
		}
		k.fps = append(k.fps, Fingerprint(kb))
	}
	return k, nil
}

// Fingerprint names a key without revealing it: the hex of HMAC-SHA256 of a fixed label under
// the key, cut to 128 bits.
func Fingerprint(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("vantage secret key fingerprint v1"))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Fingerprint is the current key's fingerprint.
func (k *Keyring) Fingerprint() string { return k.fps[0] }

// PreviousFingerprints are the fingerprints of the previous keys, in the order given.
func (k *Keyring) PreviousFingerprints() []string { return append([]string(nil), k.fps[1:]...) }

// ParseKey decodes a base64 (standard or URL alphabet, padded or not) 32-byte key.
func ParseKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("must decode to 32 bytes, got %d", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("must be base64")
}

// Seal encrypts plaintext: version byte, nonce, ciphertext+tag.
func (k *Keyring) Seal(plaintext []byte) ([]byte, error) {
	out := make([]byte, 1+k.aead.NonceSize(), 1+k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return k.aead.Seal(out, out[1:], plaintext, nil), nil //nolint:gosec // G407: the nonce was just read from crypto/rand
}

// Open decrypts what Seal produced.
func (k *Keyring) Open(sealed []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != version {
		return nil, errors.New("sealed value: unknown format")
	}
	for _, aead := range append([]cipher.AEAD{k.aead}, k.previous...) {
		if pt, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], nil); err == nil {
			return pt, nil
		}
	}
	return nil, errors.New("sealed value: cannot decrypt (wrong VANTAGE_SECRET_KEY?)")
}
