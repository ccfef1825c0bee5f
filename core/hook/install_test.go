package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const partyCmd = "'/usr/local/bin/party' hook claude"

// partyOnly is the document MergeClaudeSettings makes from nothing.
const partyOnly = `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ]
  }
}
`

func TestMergeClaudeSettings(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        string
		wantChanged bool
	}{
		{name: "empty", in: "", want: partyOnly, wantChanged: true},
		{name: "blank", in: " \n", want: partyOnly, wantChanged: true},
		{name: "empty object", in: "{}", want: partyOnly, wantChanged: true},
		{name: "null hooks", in: `{"hooks": null}`, want: partyOnly, wantChanged: true},
		{name: "already installed", in: partyOnly, want: partyOnly, wantChanged: false},
		{
			name: "already installed, compact",
			in: `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"'/usr/local/bin/party' hook claude"}]}],` +
				`"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"'/usr/local/bin/party' hook claude"}]}],` +
				`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"'/usr/local/bin/party' hook claude"}]}]}}`,
			want: `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ]
  }
}
`,
			wantChanged: false,
		},
		{
			name: "user hooks and unknown keys kept in order",
			in: `{"model": "opus", "permissions": {"allow": ["Bash(make test)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "echo mine && true", "timeout": 5}]},
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "check-bash"}], "x-note": "kept"}
    ]
  },
  "zzz": [1, 2.50, {"b": 1, "a": 2}]}`,
			want: `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(make test)"
    ]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Edit",
        "hooks": [
          {
            "type": "command",
            "command": "echo mine && true",
            "timeout": 5
          }
        ]
      },
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "check-bash"
          }
        ],
        "x-note": "kept"
      },
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ]
  },
  "zzz": [
    1,
    2.50,
    {
      "b": 1,
      "a": 2
    }
  ]
}
`,
			wantChanged: true,
		},
		{
			name: "old party path replaced in place, duplicates removed",
			in: `{"hooks": {
  "PreToolUse": [
    {"matcher": "Bash", "hooks": [{"command": "mine"}, {"type": "command", "command": "/old/bin/party hook claude", "timeout": 10}]},
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "party hook claude"}]}
  ],
  "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "'/opt/my dir/party' hook claude"}]}],
  "SessionStart": [{"hooks": [{"type": "command", "command": "'/usr/local/bin/party' hook claude"}]}]
}}`,
			want: `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "command": "mine"
          },
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude",
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ]
  }
}
`,
			wantChanged: true,
		},
		{
			name: "lookalikes are the user's",
			in: `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "party hook claude --verbose"},
  {"type": "command", "command": "partyx hook claude"},
  {"type": "command", "command": "party hook codex-notify"}
]}]}}`,
			want: `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "party hook claude --verbose"
          },
          {
            "type": "command",
            "command": "partyx hook claude"
          },
          {
            "type": "command",
            "command": "party hook codex-notify"
          }
        ]
      },
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/party' hook claude"
          }
        ]
      }
    ]
  }
}
`,
			wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := MergeClaudeSettings([]byte(tt.in), partyCmd)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.wantChanged, changed, "changed")
			assert.True(t, json.Valid(got), "output is JSON")

			again, changed, err := MergeClaudeSettings(got, partyCmd)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "second merge")
			assert.False(t, changed, "second merge changed")
			assert.Equal(t, 3, strings.Count(string(again), partyCmd), "party hooks after the second merge")
		})
	}
}

func TestMergeClaudeSettingsErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // part of the message
	}{
		{"syntax", "{\n  \"hooks\": {,}\n}", "line 2, column 13"},
		{"trailing comma", `{"a": 1,}`, "line 1, column 9"},
		{"truncated", `{"a": `, "unexpected end of JSON input"},
		{"not an object", `[1, 2]`, "top level: want an object"},
		{"hooks not an object", `{"hooks": []}`, "hooks: want an object"},
		{"event not an array", `{"hooks": {"PreToolUse": {}}}`, "hooks.PreToolUse: want an array"},
		{"group not an object", `{"hooks": {"SessionStart": ["x"]}}`, "hooks.SessionStart[0]: want an object"},
		{"group hooks not an array", `{"hooks": {"PostToolUse": [{"hooks": 1}]}}`, "hooks.PostToolUse[0].hooks: want an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := MergeClaudeSettings([]byte(tt.in), partyCmd)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSettings)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, got)
			assert.False(t, changed)
		})
	}
}

func TestIsPartyCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{partyCmd, true},
		{"party hook claude", true},
		{"/usr/bin/party hook claude", true},
		{"'/opt/my dir/party' hook claude", true},
		{`"/opt/my dir/party"   hook  claude`, true},
		{`/opt/my\ dir/party hook claude`, true},
		{"party hook claude extra", false},
		{"party hook codex-notify", false},
		{"/usr/bin/party-dev hook claude", false},
		{"'/usr/bin/party hook claude", false},
		{"echo party hook claude", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			assert.Equal(t, tt.want, IsPartyCommand(tt.cmd, partyCmd))
		})
	}
}

func TestCheckSettingsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	assert.NoError(t, CheckSettingsFile(file), "a missing file can be made")
	require.NoError(t, os.WriteFile(file, []byte("{}"), 0o644))
	assert.NoError(t, CheckSettingsFile(file))

	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(file, link))
	assert.NoError(t, CheckSettingsFile(link), "a symlink to a file is followed")

	dangling := filepath.Join(dir, "dangling.json")
	require.NoError(t, os.Symlink(filepath.Join(dir, "dotfiles", "settings.json"), dangling))
	err := CheckSettingsFile(dangling)
	assert.ErrorIs(t, err, ErrSettingsFile)
	assert.ErrorContains(t, err, "which does not exist; fix or remove the link")

	require.NoError(t, os.Chmod(file, 0o444))
	err = CheckSettingsFile(file)
	assert.ErrorIs(t, err, ErrSettingsFile, "read-only, even for root")
	assert.ErrorContains(t, err, "is read-only (mode 0444)")
	assert.ErrorIs(t, CheckSettingsFile(link), ErrSettingsFile, "through a link too")
}
