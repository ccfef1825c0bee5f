package panes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// lookAt starts a tmux server of its own whose one pane shows screen,
// and returns what the supervisor's look finds there of trigger t.
func lookAt(t *testing.T, screen string, tr supervise.Trigger) supervise.Sighting {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "screen")
	require.NoError(t, os.WriteFile(file, []byte(screen), 0o600))
	sock := "party-look-" + filepath.Base(dir)
	tmuxArgv := func(args ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
	}
	// tail -f shows the file and holds the pane open; no shell reads it.
	out, err := tmuxArgv("new-session", "-d", "-x", "200", "-y", "40", "-P", "-F", "#{pane_id}", "tail", "-n", "+1", "-f", file).CombinedOutput()
	require.NoError(t, err, "tmux: %s", out)
	t.Cleanup(func() { _ = tmuxArgv("kill-server").Run() })
	pane := strings.TrimSpace(string(out))
	out, err = tmuxArgv("set-option", "-p", "-t", pane, "@party_agent", "gemini").CombinedOutput()
	require.NoError(t, err, "tmux: %s", out)
	fx := &Effects{Tmux: tmux.New(tmux.Socket{Name: sock}, tmux.ExecRunner{}), Clock: clock.Real{}, Getenv: os.Getenv,
		Config: config.Defaults(), Info: tmux.SessionInfo{StateDir: dir}}
	rt := supervise.Runtime{Role: "gemini", Agent: "gemini", Pane: pane}
	var s supervise.Sighting
	require.Eventually(t, func() bool {
		s = fx.Look(t.Context(), rt, tr)
		return s.Reached
	}, 10*time.Second, 50*time.Millisecond, "the pane shows the envelope")
	return s
}

// TestLookTakesTheTurnsMarkerForAnAck: a gemini without hooks whose turn
// ended with its marker as the last ack window ended is idle, not busy:
// the look acks the trigger by its answer, so the window's end never takes
// the agent that answered for wedged (real_gemini_supervise_long failed so
// under load: ACK_TIMEOUT a moment before the wait read the answer).
func TestLookTakesTheTurnsMarkerForAnAck(t *testing.T) {
	nonce := wait.NewNonce()
	tr := supervise.Trigger{ID: "g1", Turn: &supervise.TurnRecord{Nonce: nonce}}
	envelope := supervise.EnvelopeMark("g1") + "thread=default]\n  deploy 42\n  [/BRIDGE_TRIGGER]\n" + wait.Instruction(nonce) + "\n"
	box := "\n >   Type your message or @path/to/file\n"

	s := lookAt(t, " > "+envelope+" ⠴ Thinking... (esc to cancel, 25s)\n"+box, tr)
	assert.Empty(t, s.Ack, "the echo of the envelope names the marker's halves apart: no ack")
	assert.True(t, s.Busy, "at work")

	s = lookAt(t, " > "+envelope+"✦ done\n  "+wait.Marker(nonce)+"\n"+box, tr)
	assert.Equal(t, supervise.AckAnswer, s.Ack, "its marker ended the turn")
	assert.False(t, s.Busy)
}
