package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// SecretPrefix marks Vantage API secrets, so secret scanners can recognise leaked ones.
const SecretPrefix = "vtg_"

// NewSecret returns a fresh 256-bit bearer secret and its hash.
func NewSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the platform is broken; nothing sane to do
	}
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// HashSecret is the stored form of a secret. Secrets are high-entropy, so a fast hash is right:
// there is nothing to brute-force, and lookups stay cheap.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// AgentSecretPrefix marks agent tokens (admin create-agent-token), apart from API secrets.
const AgentSecretPrefix = "vta_"

// NewAgentSecret returns a fresh 256-bit agent token and its hash (HashSecret).
func NewAgentSecret() (secret string, hash []byte) {
	s, _ := NewSecret()
	secret = AgentSecretPrefix + strings.TrimPrefix(s, SecretPrefix)
	return secret, HashSecret(secret)
}
