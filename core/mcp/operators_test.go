package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/state"
)

func TestOperators(t *testing.T) {
	dir := t.TempDir()
	o := Operators{Path: filepath.Join(dir, "sess", OperatorsFile), Root: dir, Reserved: []string{"claude"}}
	require.NoError(t, os.MkdirAll(filepath.Dir(o.Path), 0o700))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	token, err := o.Add("orchestrator", now)
	require.NoError(t, err)
	assert.Regexp(t, `^pmo_[0-9a-f]{48}$`, token)
	b, err := os.ReadFile(o.Path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), token, "only its hash is kept")
	fi, err := os.Stat(o.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	name, ok, err := o.Lookup(token)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "orchestrator", name)
	_, ok, err = o.Lookup("pmo_forged")
	require.NoError(t, err)
	assert.False(t, ok)

	_, err = o.Add("orchestrator", now)
	assert.ErrorIs(t, err, ErrOperatorExists)
	for _, bad := range []string{"claude", "operator", "human", "two words", ""} {
		_, err = o.Add(bad, now)
		assert.Error(t, err, "name %q", bad)
	}

	ops, err := o.List()
	require.NoError(t, err)
	assert.Equal(t, []Operator{{Name: "orchestrator", Hash: state.HashToken(token), Created: now}}, ops)

	require.NoError(t, o.Revoke("orchestrator"))
	_, ok, err = o.Lookup(token)
	require.NoError(t, err)
	assert.False(t, ok, "revoked")
	assert.ErrorIs(t, o.Revoke("orchestrator"), ErrNoOperator)
}

// TestVerify: a bearer token is the operator's, a named operator's or a
// runtime's of the session's record, else ErrBadToken; a record that
// cannot be read is the error.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	ops := Operators{Path: filepath.Join(dir, "sess", OperatorsFile), Root: dir}
	require.NoError(t, os.MkdirAll(filepath.Dir(ops.Path), 0o700))
	named, err := ops.Add("orch", time.Now())
	require.NoError(t, err)
	errNoRecord := errors.New("no record")
	record := func() (map[string]string, error) {
		return map[string]string{"claude": state.HashToken("tok-claude")}, nil
	}
	tests := []struct {
		name    string
		token   string
		runtime func() (map[string]string, error)
		want    Identity
		wantErr error
	}{
		{"the operator's", "op-token", record, Identity{Operator: true}, nil},
		{"a named operator's", named, record, Identity{Operator: true, Name: "orch"}, nil},
		{"a runtime's", "tok-claude", record, Identity{Role: "claude", Token: "tok-claude"}, nil},
		{"nobody's", "guess", record, Identity{}, ErrBadToken},
		{"no record", "tok-claude", func() (map[string]string, error) { return nil, errNoRecord }, Identity{}, errNoRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Verify(tt.token, "op-token", ops, tt.runtime)
			assert.Equal(t, tt.want, got)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			assert.NoError(t, err)
		})
	}
}
