package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/session"
)

func TestITermArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want any // nil: a usage error
	}{
		{"attach", []string{"attach"}, AttachOptions{}},
		{"attach raw, a session", []string{"--session", "s", "attach", "--raw"}, AttachOptions{party.AttachOptions{Session: "s", Raw: true}}},
		{"attach takes no argument", []string{"attach", "s"}, nil},
		{"iterm profile", []string{"iterm", "profile"}, ITermProfileOptions{}},
		{"iterm profile install", []string{"iterm", "profile", "--install"}, ITermProfileOptions{Install: true}},
		{"start raw, notified", []string{"start", "--raw", "--notify", "--pane", "a"},
			StartOptions{StartOptions: session.StartOptions{Panes: []string{"a"}, Size: "200x50", Notify: true}, Raw: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, newAttachCmd(f, capture[AttachOptions](&got)), newITermCmd(f, capture[ITermProfileOptions](&got)),
				newStartCmd(f, capture[StartOptions](&got)))
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

// TestAttachNeedsATerminal: attach refuses to run tmux on pipes.
func TestAttachNeedsATerminal(t *testing.T) {
	f, _, _ := testFactory("")
	err := execute(f, []string{"attach"})
	assert.ErrorIs(t, err, party.ErrUsage)
}
