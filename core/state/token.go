package state

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// NewToken is a fresh secret, 24 random bytes in hex: each agent's
// runtime token (it proves who the agent is to the supervisor, from its
// environment only), an HTTP server's operator token, a named operator's.
func NewToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// HashToken is what party keeps of a token where it can be read back (a
// session's record, the supervisor's store, the named operators' file):
// its SHA-256, in hex.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// SameToken reports whether got is want, in constant time whatever the
// lengths; an empty want matches nothing.
func SameToken(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return want != "" && subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
