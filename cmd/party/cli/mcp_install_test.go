package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/party"
)

func TestMCPInstallArgs(t *testing.T) {
	tests := []struct {
		name    string
		install bool
		args    []string
		want    any // nil: a usage error
	}{
		{"install", true, []string{"install", "codex"}, MCPInstallOptions{Agent: "codex", Install: true}},
		{"install forced, printed", true, []string{"install", "claude", "--force", "--print"},
			MCPInstallOptions{Agent: "claude", Install: true, Force: true, Print: true}},
		{"uninstall", false, []string{"uninstall", "gemini"}, MCPInstallOptions{Agent: "gemini"}},
		{"no agent", true, []string{"install"}, nil},
		{"two agents", false, []string{"uninstall", "claude", "codex"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, newMCPInstallCmd(f, tt.install, capture[MCPInstallOptions](&got)))
			if tt.want == nil {
				assert.ErrorIs(t, err, party.ErrUsage)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMCPArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want any // nil: a usage error
	}{
		{"stdio", []string{"mcp"}, MCPOptions{}},
		{"http", []string{"mcp", "--http", "127.0.0.1:8765"}, MCPOptions{HTTP: "127.0.0.1:8765"}},
		{"socket", []string{"mcp", "--socket", "/tmp/p.sock"}, MCPOptions{Socket: "/tmp/p.sock"}},
		{"an argument", []string{"mcp", "stdio"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, newMCPCmd(f, capture[MCPOptions](&got)))
			if tt.want == nil {
				assert.ErrorIs(t, err, party.ErrUsage)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMCPTokenArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want any // nil: a usage error
	}{
		{"add", []string{"token", "add", "orchestrator"}, MCPTokenOptions{Verb: "add", Name: "orchestrator"}},
		{"list", []string{"token", "list"}, MCPTokenOptions{Verb: "list"}},
		{"revoke", []string{"token", "revoke", "orchestrator"}, MCPTokenOptions{Verb: "revoke", Name: "orchestrator"}},
		{"add without a name", []string{"token", "add"}, nil},
		{"list with a name", []string{"token", "list", "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, newMCPTokenCmd(f, capture[MCPTokenOptions](&got)))
			if tt.want == nil {
				assert.ErrorIs(t, err, party.ErrUsage)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
