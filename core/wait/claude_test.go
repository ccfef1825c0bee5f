package wait

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
)

// realTranscript is a Claude Code 2.1.197 transcript recorded against the
// fake model (attachments shortened, paths normalized): an Esc before the
// first token ("slow job one"), an Esc while streaming ("stream job
// two"), a permission refused with 3 ("perm job three") and with Esc
// ("perm job four"), a turn with two messages queued during it ("batch
// first", then "batch second" and "batch third" as one turn), and a 500
// that outlived its retries ("error job six").
const realTranscript = "testdata/claude-2.1.197.jsonl"

func TestClaudeTranscriptRealRecords(t *testing.T) {
	tests := []struct {
		prompt string
		err    error
		msg    string
	}{
		{"slow job one", nil, ""},
		{"stream job two", ErrInterrupted, "interrupted (Esc)"},
		{"perm job three", ErrInterrupted, "permission refused: the operator refused Bash(touch tool-ran)"},
		{"perm job four", ErrInterrupted, "permission refused: the operator refused Bash(touch tool-ran)"},
		{"batch first", nil, ""},
		{"batch second", nil, ""},
		{"batch third", nil, ""},
		{"error job six", ErrTurnFailed, "server_error: API Error: 500 fakemodel: scripted failure 500."},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			// The path learned from a hook event: the file is read from
			// its start, and what follows the prompt's entry counts.
			c := NewClaudeTranscript("", "%1", "  "+tt.prompt+"\n", agent.Lookup(agent.Claude), nil)
			c.See(hook.Event{Pane: "%1", Transcript: realTranscript})
			_, done, err := c.Check()
			if tt.err == nil {
				assert.False(t, done)
				assert.NoError(t, err)
				return
			}
			assert.True(t, done)
			assert.ErrorIs(t, err, tt.err)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}

// TestClaudeTranscriptFromSubmission appends the real records one by one
// after the source was made: only entries after the prompt's user entry
// count, and a refusal counts once Claude stopped the turn.
func TestClaudeTranscriptFromSubmission(t *testing.T) {
	lines := readLines(t, realTranscript)
	at := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i
			}
		}
		t.Fatalf("no line holds %q", sub)
		return 0
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	events := filepath.Join(dir, "events.jsonl")
	ev, _ := json.Marshal(hook.Event{Pane: "%1", Kind: hook.SessionStart, Transcript: path})
	require.NoError(t, os.WriteFile(events, append(ev, '\n'), 0o600))

	// Everything up to the turn before ours is there when the prompt is sent.
	ours := at(`"content":"perm job four"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:at(`"content":"perm job three"`)], "\n")+"\n"), 0o600))
	c := NewClaudeTranscript(events, "%1", "perm job four", agent.Lookup(agent.Claude), nil)
	refusal, stopped := at(`"tool_use_id":"toolu_611b555b266306f1"`), at(`"promptId":"7bbdc0b7-86e6-4c06-a2bf-71b6a912fe2e","type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]`)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	for i := at(`"content":"perm job three"`); i <= stopped; i++ {
		// Half a line first: it is left for the next look.
		half := len(lines[i]) / 2
		_, err = f.WriteString(lines[i][:half])
		require.NoError(t, err)
		_, done, err := c.Check()
		require.NoError(t, err)
		require.False(t, done, "line %d half-written", i)
		_, err = f.WriteString(lines[i][half:] + "\n")
		require.NoError(t, err)
		_, done, err = c.Check()
		if i < stopped {
			require.False(t, done, "line %d (ours at %d, refusal at %d): %v", i, ours, refusal, err)
			continue
		}
		assert.True(t, done)
		assert.ErrorIs(t, err, ErrInterrupted)
		assert.ErrorContains(t, err, "permission refused")
	}
}

// TestClaudeTranscriptAmendedRefusal: a refusal with feedback (Tab to
// amend) goes on with the turn; no interrupt entry follows it.
func TestClaudeTranscriptAmendedRefusal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	body := `{"type":"user","message":{"role":"user","content":"do it"}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm x"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"The user doesn't want to proceed with this tool use. The tool use was rejected. To tell you how to proceed, the user said: use git rm","is_error":true,"tool_use_id":"t1"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"ok, git rm then"}]}}
`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	c := NewClaudeTranscript("", "%1", "do it", agent.Lookup(agent.Claude), nil)
	c.See(hook.Event{Pane: "%1", Transcript: path})
	_, done, err := c.Check()
	assert.False(t, done)
	assert.NoError(t, err)
}

// TestClaudeTranscriptEscBeforeToken: an Esc before the first token leaves
// no transcript entry; the real screen has the prompt back in the box of
// an idle Claude.
func TestClaudeTranscriptEscBeforeToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := readLines(t, realTranscript)
	require.NoError(t, os.WriteFile(path, []byte(lines[4]+"\n"), 0o600)) // "slow job one"
	busy := readFile(t, "../../golden/screens/claude@2.1.197/busy-before-token.txt")
	back := readFile(t, "testdata/claude-esc-before-token.txt")
	idle := readFile(t, "../../golden/screens/claude@2.1.197/idle.txt")
	tests := []struct {
		name    string
		screens []string
		err     error
	}{
		{"busy then back in the box", []string{busy, back}, ErrInterrupted},
		{"empty box then back in the box", []string{idle, back}, ErrInterrupted},
		{"in the box at the first look", []string{back}, ErrInterrupted},
		{"still busy", []string{busy, busy}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			screen := func() (string, error) { s := tt.screens[min(i, len(tt.screens)-1)]; i++; return s, nil }
			c := NewClaudeTranscript("", "%1", "slow job one", agent.Lookup(agent.Claude), screen)
			c.See(hook.Event{Pane: "%1", Transcript: path})
			var err error
			for range tt.screens {
				if _, _, err = c.Check(); err != nil {
					break
				}
			}
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
		})
	}
	// Claude runs UserPromptSubmit before it empties its box: after the
	// hook, a box still holding the prompt is Claude not done taking it
	// (on a loaded machine, seconds), not a put-back prompt, until the
	// box was seen letting go of it.
	afterHook := []struct {
		name    string
		screens []string
		err     error
	}{
		{"after the hook, still in the box", []string{back, back, back}, nil},
		{"after the hook, still in the box past the grace", []string{back, back, back, back, back, back, back}, ErrInterrupted},
		{"after the hook, busy then back in the box", []string{back, busy, back}, ErrInterrupted},
		{"after the hook, empty box then back in the box", []string{back, idle, back}, ErrInterrupted},
	}
	for _, tt := range afterHook {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			screen := func() (string, error) { s := tt.screens[min(i, len(tt.screens)-1)]; i++; return s, nil }
			c := NewClaudeTranscript("", "%1", "slow job one", agent.Lookup(agent.Claude), screen)
			// A look a second, as the waiter's poll.
			now := time.Unix(0, 0)
			c.Now = func() time.Time { return now }
			c.See(hook.Event{Pane: "%1", Kind: hook.PromptSubmit, Prompts: []string{"slow job one"}, Transcript: path})
			var err error
			for range tt.screens {
				if _, _, err = c.Check(); err != nil {
					break
				}
				now = now.Add(time.Second)
			}
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
		})
	}
	t.Run("another prompt's hook does not hold the check", func(t *testing.T) {
		c := NewClaudeTranscript("", "%1", "slow job one", agent.Lookup(agent.Claude), func() (string, error) { return back, nil })
		c.See(hook.Event{Pane: "%1", Kind: hook.PromptSubmit, Prompts: []string{"another job"}})
		c.See(hook.Event{Pane: "%2", Kind: hook.PromptSubmit, Prompts: []string{"slow job one"}})
		_, _, err := c.Check()
		assert.ErrorIs(t, err, ErrInterrupted)
	})
	t.Run("back in the box before the transcript names the prompt", func(t *testing.T) {
		// Claude can take the Esc before it writes the prompt's entry (or
		// runs its hook); the wait starts once delivery saw the box let go
		// of the prompt, so the prompt back in it is the interrupt.
		c := NewClaudeTranscript("", "%1", "slow job one", agent.Lookup(agent.Claude), func() (string, error) { return back, nil })
		_, _, err := c.Check()
		assert.ErrorIs(t, err, ErrInterrupted)
	})
}

func TestClaudeTranscriptEventsOfOtherPanes(t *testing.T) {
	c := NewClaudeTranscript("", "%1", "q", agent.Lookup(agent.Claude), nil)
	c.See(hook.Event{Pane: "%2", Transcript: realTranscript})
	assert.Empty(t, c.path)
}

func TestRetrying(t *testing.T) {
	assert.Equal(t, "attempt 4/10, next in 1s", Retrying(readFile(t, "../../golden/screens/claude@2.1.197/error-retry.txt")))
	assert.Empty(t, Retrying(readFile(t, "../../golden/screens/claude@2.1.197/busy-before-token.txt")))
	old := "✻ API error · Retrying in 1s · attempt 4/10\n" + strings.Repeat("history\n", 20) + "❯ \n"
	assert.Empty(t, Retrying(old), "a retry line in the history is not the agent's state")
	err := (&TimeoutError{Pane: "%1", After: 60e9, Screen: "x", Retrying: "attempt 7/10, next in 13s"}).Error()
	assert.Contains(t, err, "retrying an API error (attempt 7/10, next in 13s)")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func readLines(t *testing.T, path string) []string {
	return strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n")
}

// TestClaudeTranscriptDeafAnswers: with the hooks' events lost, the
// transcript's end of the turn (turn_duration) tells the answer: the text
// of the last assistant message, after its tool calls.
func TestClaudeTranscriptDeafAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	body := `{"type":"user","message":{"role":"user","content":"do it"}}
{"type":"assistant","message":{"content":[{"type":"text","text":"let me look"}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"a b","tool_use_id":"t1"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"done:"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"a and b"}]}}
`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	c := NewClaudeTranscript("", "%1", "do it", agent.Lookup(agent.Claude), nil)
	c.See(hook.Event{Pane: "%1", Transcript: path})
	_, done, err := c.Check()
	require.NoError(t, err)
	assert.False(t, done, "events heard: the Stop hook tells the answer")
	c.Deaf()
	_, done, _ = c.Check()
	assert.False(t, done, "the turn has not ended")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"system","subtype":"turn_duration","durationMs":5}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	res, done, err := c.Check()
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, Result{Answer: "done:\na and b", Via: "transcript"}, res)
}
