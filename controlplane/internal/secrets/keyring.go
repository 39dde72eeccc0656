// Package secrets seals values that Vantage stores encrypted at rest (environment variable
// values, check passwords) with AES-256-GCM under the control plane's secret key.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// version prefixes every sealed value so the format (or key) can be rotated later.
const version byte = 1

// Keyring seals and opens values. It is safe for concurrent use.
type Keyring struct{ aead cipher.AEAD }

// NewKeyring builds a keyring from a 32-byte key.
func NewKeyring(key []byte) (*Keyring, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{aead: aead}, nil
}

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
	pt, err := k.aead.Open(nil, sealed[1:1+n], sealed[1+n:], nil)
	if err != nil {
		return nil, errors.New("sealed value: cannot decrypt (wrong VANTAGE_SECRET_KEY?)")
	}
	return pt, nil
}
