package mcp

import "github.com/partyhq/party/core/state"

// Verify is the identity of a bearer token of a session (HTTPOptions.Verify):
// the operator's (op), a named operator's (ops), else the runtime whose
// token's SHA-256 runtimes gives by role (the session's record keeps
// them, as state.HashToken makes them; read at each call), else
// ErrBadToken.
func Verify(token, op string, ops Operators, runtimes func() (map[string]string, error)) (Identity, error) {
	if state.SameToken(token, op) {
		return Identity{Operator: true}, nil
	}
	if name, ok, err := ops.Lookup(token); err != nil || ok {
		return Identity{Operator: true, Name: name}, err
	}
	tokens, err := runtimes()
	if err != nil {
		return Identity{}, err
	}
	for role, hash := range tokens {
		if state.SameToken(state.HashToken(token), hash) {
			return Identity{Role: role, Token: token}, nil
		}
	}
	return Identity{}, ErrBadToken
}
