package hook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partyMCP is party's server as core/session asks for it.
var partyMCP = GeminiMCP{Command: "/opt/party bin/party", Args: []string{"mcp"}, Trust: true,
	Allow: []string{"PARTY_SESSION", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN"}}

func TestMergeGeminiMCP(t *testing.T) {
	tests := []struct {
		name string
		user string // "" : no file
		s    GeminiMCP
		want string // the merged document
		// added is what the merge reports added.
		added GeminiMCPAdded
	}{
		{name: "a new file", s: partyMCP,
			want: `{"mcpServers": {"party": {"command": "/opt/party bin/party", "args": ["mcp"], "trust": true}},
				"security": {"environmentVariableRedaction": {"allowed": ["PARTY_SESSION", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN"]}}}`,
			added: GeminiMCPAdded{Server: true, Command: "/opt/party bin/party", Allowed: []string{"PARTY_SESSION", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN"},
				Made: []string{madeServers, madeSecurity, madeRedaction, madeAllowed}}},
		{name: "the user's keys, servers and allowed names kept in order",
			user: `{"ui": {"theme": "dark"}, "mcpServers": {"mine": {"command": "my-server"}},
				"security": {"auth": {"selectedType": "gemini-api-key"}, "environmentVariableRedaction": {"allowed": ["MY_TOKEN", "PARTY_ROLE"], "blocked": ["X"]}}, "z": 1}`,
			s: partyMCP,
			want: `{"ui": {"theme": "dark"}, "mcpServers": {"mine": {"command": "my-server"}, "party": {"command": "/opt/party bin/party", "args": ["mcp"], "trust": true}},
				"security": {"auth": {"selectedType": "gemini-api-key"}, "environmentVariableRedaction": {"allowed": ["MY_TOKEN", "PARTY_ROLE", "PARTY_SESSION", "PARTY_RUNTIME_TOKEN"], "blocked": ["X"]}}, "z": 1}`,
			added: GeminiMCPAdded{Server: true, Command: "/opt/party bin/party", Allowed: []string{"PARTY_SESSION", "PARTY_RUNTIME_TOKEN"}}},
		{name: "prompting: no trust", s: GeminiMCP{Command: "/p", Args: []string{"mcp"}},
			user:  `{"security": {}}`,
			want:  `{"mcpServers": {"party": {"command": "/p", "args": ["mcp"]}}, "security": {}}`,
			added: GeminiMCPAdded{Server: true, Command: "/p", Made: []string{madeServers}}},
		{name: "the user's own party mcp is kept, and given the variables",
			user: `{"mcpServers": {"party": {"command": "/opt/party bin/party", "args": ["mcp"], "timeout": 5}}}`,
			s:    partyMCP,
			want: `{"mcpServers": {"party": {"command": "/opt/party bin/party", "args": ["mcp"], "timeout": 5}},
				"security": {"environmentVariableRedaction": {"allowed": ["PARTY_SESSION", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN"]}}}`,
			added: GeminiMCPAdded{Allowed: []string{"PARTY_SESSION", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN"}, Made: []string{madeSecurity, madeRedaction, madeAllowed}}},
		{name: "a server named party of the user's: nothing added",
			user:  `{"mcpServers": {"party": {"command": "party", "args": ["mcp"]}}}`,
			s:     partyMCP,
			want:  `{"mcpServers": {"party": {"command": "party", "args": ["mcp"]}}}`,
			added: GeminiMCPAdded{Conflict: "party"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, added, changed, err := MergeGeminiMCP([]byte(tt.user), tt.s, GeminiMCPAdded{})
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(merged))
			assert.Equal(t, tt.added, added)
			assert.Equal(t, tt.added.Conflict == "", changed, "changed")
			if tt.added.Conflict != "" {
				assert.Equal(t, tt.user, string(merged), "left as it was")
				return
			}

			// Merging again changes nothing and claims the same.
			again, added2, changed, err := MergeGeminiMCP(merged, tt.s, added)
			require.NoError(t, err)
			assert.False(t, changed)
			assert.Equal(t, string(merged), string(again))
			assert.Equal(t, added, added2)

			// Removal takes out exactly what was added.
			out, changed, empty, err := RemoveGeminiMCP(merged, added)
			require.NoError(t, err)
			assert.True(t, changed)
			if tt.user == "" {
				assert.True(t, empty)
				assert.JSONEq(t, `{}`, string(out))
				return
			}
			assert.False(t, empty)
			assert.JSONEq(t, tt.user, string(out))
		})
	}
}

func TestMergeGeminiMCPByteExactRoundTrip(t *testing.T) {
	// A file in the shape party writes comes back byte for byte.
	user := "{\n  \"ui\": {\n    \"theme\": \"dark\"\n  },\n  \"security\": {\n    \"environmentVariableRedaction\": {\n      \"allowed\": []\n    }\n  }\n}\n"
	merged, added, _, err := MergeGeminiMCP([]byte(user), partyMCP, GeminiMCPAdded{})
	require.NoError(t, err)
	assert.Equal(t, []string{madeServers}, added.Made, "the user's empty allow-list is not party's")
	out, _, _, err := RemoveGeminiMCP(merged, added)
	require.NoError(t, err)
	assert.Equal(t, user, string(out))
}

func TestMergeGeminiMCPAfterACrash(t *testing.T) {
	// What a session added and never took out (it crashed) is still
	// party's when it starts again, even from another binary.
	first, added, _, err := MergeGeminiMCP(nil, partyMCP, GeminiMCPAdded{})
	require.NoError(t, err)
	moved := partyMCP
	moved.Command = "/new/party"
	second, added2, changed, err := MergeGeminiMCP(first, moved, added)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Contains(t, string(second), `"/new/party"`)
	assert.True(t, added2.Server)
	assert.Equal(t, added.Allowed, added2.Allowed)
	out, _, empty, err := RemoveGeminiMCP(second, added2)
	require.NoError(t, err)
	assert.True(t, empty, "got %s", out)

	// Without the record, the same document is the user's.
	_, added3, _, err := MergeGeminiMCP(first, moved, GeminiMCPAdded{})
	require.NoError(t, err)
	assert.Equal(t, "/opt/party bin/party", added3.Conflict)
}

func TestRemoveGeminiMCPLeavesWhatTheUserChanged(t *testing.T) {
	merged, added, _, err := MergeGeminiMCP([]byte(`{"a": 1}`), partyMCP, GeminiMCPAdded{})
	require.NoError(t, err)
	// Since, the user pointed the server elsewhere and allowed a name of
	// their own.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(merged, &doc))
	doc["mcpServers"].(map[string]any)["party"].(map[string]any)["command"] = "/their/party"
	red := doc["security"].(map[string]any)["environmentVariableRedaction"].(map[string]any)
	red["allowed"] = append(red["allowed"].([]any), "MINE")
	edited, err := json.Marshal(doc)
	require.NoError(t, err)

	out, changed, empty, err := RemoveGeminiMCP(edited, added)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.False(t, empty)
	assert.JSONEq(t, `{"a": 1, "mcpServers": {"party": {"command": "/their/party", "args": ["mcp"], "trust": true}},
		"security": {"environmentVariableRedaction": {"allowed": ["MINE"]}}}`, string(out))

	out, changed, _, err = RemoveGeminiMCP([]byte(`{"a": 1}`), added)
	require.NoError(t, err)
	assert.False(t, changed, "nothing of party's left")
	assert.Equal(t, `{"a": 1}`, string(out))
}

func TestMergeGeminiMCPRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"comments":               "{\n  // mine\n  \"a\": 1\n}",
		"invalid":                `{"a": 1,}`,
		"servers not an object":  `{"mcpServers": []}`,
		"security not an object": `{"security": "on"}`,
		"allowed not an array":   `{"security": {"environmentVariableRedaction": {"allowed": "PARTY_ROLE"}}}`,
		"party not an object":    `{"mcpServers": {"party": "x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := MergeGeminiMCP([]byte(doc), partyMCP, GeminiMCPAdded{})
			assert.ErrorIs(t, err, ErrSettings)
		})
	}
}
