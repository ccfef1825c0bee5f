package session

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// NewToken is a fresh runtime token: each agent proves who it is to the
// supervisor with one of its own, in its environment only.
func NewToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// HashToken is what the session's record (and the supervisor's store,
// from it) keeps of a runtime token: its SHA-256, in hex.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}
