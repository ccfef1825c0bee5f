package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	assert.Len(t, a, 48)
	assert.NotEqual(t, a, b, "fresh each time")
	assert.Equal(t, "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", HashToken("foo"))
	assert.True(t, SameToken(a, a))
	assert.False(t, SameToken(a, b))
	assert.False(t, SameToken(a, a[:47]), "a prefix is not the token")
	assert.False(t, SameToken("", ""), "an empty want matches nothing")
}
