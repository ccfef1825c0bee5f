package mockagents

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/script"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mock's headless runs print what core/agent reads from the real
// agents, log the prompt as a submit without a pane, and resume the
// session they are given.
func TestHeadless(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	log := filepath.Join(home, "mock.log")
	sc, err := script.Parse("t", "on /fail/\n  fail 500\non *\n  say answer to $0\n")
	require.NoError(t, err)
	// claude resumes only a session it has a transcript of.
	require.NoError(t, os.MkdirAll(filepath.Dir(claudeTranscriptPath("s-1")), 0o700))
	require.NoError(t, os.WriteFile(claudeTranscriptPath("s-1"), nil, 0o600))
	for _, c := range []struct {
		persona string
		args    []string
	}{
		{"claude", []string{"--resume", "s-1", "-p", "hello there", "--output-format", "json"}},
		{"gemini", []string{"--resume", "s-1", "-p", "hello there", "--output-format", "json"}},
		{"codex", []string{"-c", "x=1", "exec", "--skip-git-repo-check", "--json", "resume", "s-1", "hello there"}},
	} {
		h, ok := headlessOf(c.persona, c.args)
		require.True(t, ok, c.persona)
		var out, errOut bytes.Buffer
		code := h.run(Options{Persona: c.persona, Script: sc, LogPath: log}, &out, &errOut)
		assert.Equal(t, 0, code, "%s: %s", c.persona, errOut.String())
		got, err := agent.ParseHeadless(agent.Kind(c.persona), out.Bytes())
		require.NoError(t, err, c.persona)
		assert.Equal(t, agent.Headless{Answer: "answer to hello there", Session: "s-1", Done: true, Ran: true}, got, c.persona)

		h.prompt = "please fail"
		out.Reset()
		errOut.Reset()
		code = h.run(Options{Persona: c.persona, Script: sc, LogPath: log}, &out, &errOut)
		got, err = agent.ParseHeadlessRun(agent.Kind(c.persona), out.Bytes(), errOut.Bytes())
		assert.ErrorIs(t, err, agent.ErrHeadlessTurn, c.persona)
		assert.True(t, got.Ran, "%s: the failed turn ran on the prompt", c.persona)
		assert.Equal(t, 1, code, c.persona)
	}
	entries, err := mocklog.Read(log)
	require.NoError(t, err)
	require.Len(t, entries, 6)
	assert.Equal(t, "hello there", entries[0].Text)
	assert.Equal(t, "submit", entries[0].Mode)

	// A session claude has no transcript of: refused before the prompt is
	// read, as the real one refuses it.
	h, ok := headlessOf("claude", []string{"--resume", "s-gone", "-p", "hello there", "--output-format", "json"})
	require.True(t, ok)
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, h.run(Options{Persona: "claude", Script: sc, LogPath: log}, &out, &errOut))
	assert.Empty(t, out.String())
	assert.Equal(t, "No conversation found with session ID: s-gone\n", errOut.String())
	got, err := agent.ParseHeadlessRun(agent.Claude, out.Bytes(), errOut.Bytes())
	assert.ErrorIs(t, err, agent.ErrHeadlessTurn)
	assert.False(t, got.Ran)
	entries, err = mocklog.Read(log)
	require.NoError(t, err)
	assert.Len(t, entries, 6, "nothing logged: the prompt reached no agent")

	_, ok = headlessOf("claude", []string{"--settings", "x.json"})
	assert.False(t, ok, "an interactive claude is not headless")
	_, ok = headlessOf("codex", []string{"-c", "x=1", "resume", "s-1"})
	assert.False(t, ok, "an interactive codex resume is not headless")
}

// codex exec resume refuses a thread a live codex holds, as the real one.
func TestHeadlessCodexActiveWriter(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	holdThread(filepath.Join(home, ".codex"), "th-1")
	// The writer must be another live process: the test's parent.
	p := writerPath(filepath.Join(home, ".codex"), "th-1")
	require.NoError(t, os.WriteFile(p, []byte(strconv.Itoa(os.Getppid())), 0o600))
	h, ok := headlessOf("codex", []string{"exec", "--json", "resume", "th-1", "hi"})
	require.True(t, ok)
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, h.run(Options{Persona: "codex"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "already has an active writer")
}
