package mockagents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiHookHome writes user settings whose BeforeAgent, AfterAgent and
// Notification hooks append each payload to a JSON-lines file, in a fresh
// HOME; trusted says whether trustedFolders.json trusts the working
// directory.
func geminiHookHome(t *testing.T, trusted bool) (out string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "")
	out = filepath.Join(home, "events.jsonl")
	record := []map[string]any{{"type": "command", "command": "cat >> " + out + "; echo >> " + out}}
	hooks := map[string]any{}
	for _, ev := range []string{"BeforeAgent", "AfterAgent", "Notification"} {
		hooks[ev] = []map[string]any{{"hooks": record}}
	}
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", name), b, 0o600))
	}
	write("settings.json", map[string]any{"hooks": hooks})
	if trusted {
		cwd, err := os.Getwd()
		require.NoError(t, err)
		write("trustedFolders.json", map[string]string{cwd: "TRUST_FOLDER"})
	}
	return out
}

func TestGeminiHooks(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		out := geminiHookHome(t, true)
		m := startMock(t, DefaultOptions("gemini"), "on /one/\n  think 1500ms\n  say first\n  say done\n"+
			"on /bad/\n  fail invalid_request\non /perm/\n  permission rm -rf build\non *\n  say merged done\n")
		m.expect("Type your message")
		m.submit("one")
		m.expect("esc to cancel")
		m.submit("two")
		m.expect("Queued")
		m.submit("three")
		m.expect("merged done")
		m.submit("bad")
		m.expect("API Error")
		m.submit("perm")
		m.expect("Allow execution")

		got := payloads(t, out, 7)
		require.Equal(t, []string{"BeforeAgent", "AfterAgent", "BeforeAgent", "AfterAgent", "BeforeAgent", "AfterAgent", "BeforeAgent", "Notification"}, events(got))
		for _, p := range got {
			for _, k := range []string{"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"} {
				assert.NotEmpty(t, p[k], "%s of %s", k, p["hook_event_name"])
			}
		}
		assert.Equal(t, "one", got[0]["prompt"])
		assert.Equal(t, "one", got[1]["prompt"])
		assert.Equal(t, "first\ndone", got[1]["prompt_response"])
		assert.Equal(t, false, got[1]["stop_hook_active"])
		assert.Equal(t, "two\n\nthree", got[2]["prompt"], "a merged queue is one prompt")
		assert.Equal(t, "merged done", got[3]["prompt_response"])
		assert.Equal(t, "[no response text]", got[5]["prompt_response"], "a failed turn")
		assert.Equal(t, "ToolPermission", got[7]["notification_type"])
		assert.Equal(t, "rm -rf build", got[7]["details"].(map[string]any)["command"])
	})
}

func TestGeminiHooksNotInUntrustedFolder(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		out := geminiHookHome(t, false)
		m := startMock(t, DefaultOptions("gemini"), "on *\n  say ok\n")
		m.expect("Type your message")
		m.submit("one")
		m.expect("ok")
		m.submit("two")
		m.expect("ok")
		assert.Empty(t, payloads(t, out, 0), "hooks run in order: the turns are over, no hook ran")
	})
}
