package observe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
)

func TestRead(t *testing.T) {
	claude := agent.Lookup(agent.Claude)
	box := "● hi\n────────\n❯\u00a0%s\n────────\n  ? for shortcuts"
	st := Read(claude, mux.Pane{ID: "%1"}, fmt.Sprintf(box, ""))
	assert.True(t, st.HasInput)
	assert.Empty(t, st.Input)
	assert.True(t, st.Ready(claude))

	st = Read(claude, mux.Pane{ID: "%1"}, fmt.Sprintf(box, "a draft"))
	assert.Equal(t, "a draft", st.Input)

	st = Read(claude, mux.Pane{ID: "%1"}, " Do you want to proceed?\n ❯ 1. Yes\n   2. No")
	assert.NotEmpty(t, st.Dialog)
	assert.False(t, st.Ready(claude), "a dialog covers the box")

	// An agent whose box party cannot read is ready when it runs.
	assert.True(t, Read(agent.Lookup(agent.Generic), mux.Pane{}, "anything").Ready(agent.Lookup(agent.Generic)))
}

func TestEventsSubmitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	ev := Events{Path: path}
	assert.Zero(t, ev.Mark(), "no log yet")
	write := func(e hook.Event) {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = f.Write(append(b, '\n'))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	write(hook.Event{Pane: "%1", Kind: hook.PromptSubmit, Prompts: []string{"old text"}})
	mark := ev.Mark()
	assert.False(t, ev.Submitted("%1", mark, "old text"), "only events after the mark count")

	write(hook.Event{Pane: "%2", Kind: hook.PromptSubmit, Prompts: []string{"new text"}})
	assert.False(t, ev.Submitted("%1", mark, "new text"), "another pane's submission")

	// Gemini merges queued prompts; claude turns tabs into spaces.
	write(hook.Event{Pane: "%1", Kind: hook.PromptSubmit, Prompts: []string{"first\n\nnew\ttext"}})
	assert.True(t, ev.Submitted("%1", mark, "new    text"))
	assert.False(t, Events{}.Submitted("%1", 0, "x"), "no log configured")
}
