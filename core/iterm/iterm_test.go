package iterm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		raw     bool
		enabled bool
		want    Choice
	}{
		{"iTerm2", map[string]string{"TERM_PROGRAM": "iTerm.app"}, false, true, Choice{true, "TERM_PROGRAM=iTerm.app"}},
		{"iTerm2 over ssh", map[string]string{"LC_TERMINAL": "iTerm2", "TERM_PROGRAM": ""}, false, true, Choice{true, "LC_TERMINAL=iTerm2"}},
		{"inside tmux", map[string]string{"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/x,1,0"}, false, true, Choice{false, "inside tmux: the client switches"}},
		{"--raw", map[string]string{"TERM_PROGRAM": "iTerm.app"}, true, true, Choice{false, "--raw"}},
		{"PARTY_RAW", map[string]string{"TERM_PROGRAM": "iTerm.app", "PARTY_RAW": "1"}, false, true, Choice{false, "PARTY_RAW=1"}},
		{"configured off", map[string]string{"TERM_PROGRAM": "iTerm.app"}, false, false, Choice{false, "iterm.controlMode is false"}},
		{"another terminal", map[string]string{"TERM_PROGRAM": "Apple_Terminal"}, false, true, Choice{false, "not iTerm2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Wanted(func(k string) string { return tt.env[k] }, tt.raw, tt.enabled)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestProfile(t *testing.T) {
	p := NewProfiles("/Applications/My Tools/party")
	var doc map[string][]map[string]any
	require.NoError(t, json.Unmarshal(p.Marshal(), &doc))
	require.Len(t, doc["Profiles"], 1)
	prof := doc["Profiles"][0]
	assert.Equal(t, "Party", prof["Name"])
	assert.Equal(t, ProfileGUID, prof["Guid"])
	assert.Equal(t, "Yes", prof["Custom Command"])
	assert.Equal(t, "'/Applications/My Tools/party' start", prof["Command"])
	assert.Equal(t, "Recycle", prof["Custom Directory"])

	assert.Equal(t, "/usr/local/bin/party", shellWord("/usr/local/bin/party"))
	assert.Equal(t, `'/it'\''s/party'`, shellWord("/it's/party"))

	home := t.TempDir()
	path := ProfilePath(home)
	assert.Equal(t, filepath.Join(home, "Library/Application Support/iTerm2/DynamicProfiles/party.json"), path)
	changed, err := Install(path, p)
	require.NoError(t, err)
	assert.True(t, changed)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(p.Marshal()), string(b))
	changed, err = Install(path, p)
	require.NoError(t, err)
	assert.False(t, changed, "installing again changes nothing")
	assert.Contains(t, KeyHelp("/usr/local/bin/party")[2], "/usr/local/bin/party stop >/dev/null 2>&1")
}
