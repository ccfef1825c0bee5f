package mockagents

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (m *mock) expectRe(re string) string {
	m.t.Helper()
	return m.expectMatch("/"+re+"/", regexp.MustCompile(re).FindIndex)
}

// submit pastes text and presses Enter once the paste has settled.
func (m *mock) submit(text string) {
	m.t.Helper()
	m.paste(text)
	time.Sleep(250 * time.Millisecond)
	m.send("\r")
}

// claudeHooks writes a settings file whose hooks append each payload of
// events to a JSON-lines file, with Stop hooks that take a while; HOME is a
// fresh directory so no user settings leak in.
func claudeHooks(t *testing.T, events ...string) (settings, out string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	out = filepath.Join(dir, "events.jsonl")
	record := []map[string]any{{"type": "command", "command": "cat >> " + out + "; echo >> " + out}}
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []map[string]any{{"hooks": record}}
	}
	hooks["Stop"] = []map[string]any{{"hooks": append(record, map[string]any{"type": "command", "command": "sleep 0.4"})}}
	b, err := json.Marshal(map[string]any{"hooks": hooks})
	require.NoError(t, err)
	settings = filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(settings, b, 0o644))
	return settings, out
}

// payloads waits until the file holds n payloads, then a little more to
// catch extra ones.
func payloads(t *testing.T, path string, n int) []map[string]any {
	t.Helper()
	read := func() []map[string]any {
		var out []map[string]any
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var p map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &p), sc.Text())
			out = append(out, p)
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(read()) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return read()
}

func events(ps []map[string]any) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p["hook_event_name"].(string))
	}
	return out
}

func modes(entries []mocklog.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Mode+":"+e.Text)
	}
	return out
}

func TestClaudeBusyLineAndSummary(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		opt := claudeOpts()
		opt.ParenAfter = time.Second
		m := startMock(t, opt, "on *\n  think 2500ms\n  say ok\n")
		m.expect("❯\u00a0")
		m.submit("go")
		m.expect("❯ go\r\n")
		m.expectRe(`[·✢✳✶✻✽*] [A-Z][a-z-]+…\r\n\r\n─+\r\n❯\x{00a0}\r\n─+\r\n  esc to interrupt · ← for agents`)
		m.expectRe(`[A-Z][a-z-]+… \(1s · ↓ 0 tokens\)`)
		m.expect("● ok\r\n")
		m.expectRe(`✻ [A-Z][a-zé]+ed for [23]s\r\n`)
		m.expect("? for shortcuts · ← for agents")
	})
}

func TestClaudeQueuedMessagesAreOneTurn(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		settings, out := claudeHooks(t, "UserPromptSubmit", "SessionStart")
		opt := claudeOpts()
		opt.Settings = settings
		m := startMock(t, opt, "on /one/\n  think 1500ms\n  say first done\non *\n  say batch done\n")
		m.expect("❯\u00a0")
		m.submit("one")
		m.expect("esc to interrupt")
		m.submit("two")
		m.expect("  ❯ two\r\n")
		m.submit("three")
		m.expect("Press up to edit queued messages")
		m.expect("(running stop hooks… 0/2 · ")
		m.expect("❯ two\r\n")
		m.expect("❯ three\r\n")
		m.expect("● batch done")

		got := payloads(t, out, 6)
		require.Equal(t, []string{"SessionStart", "UserPromptSubmit", "Stop", "UserPromptSubmit", "UserPromptSubmit", "Stop"}, events(got))
		for _, p := range got {
			for _, k := range []string{"session_id", "transcript_path", "cwd", "hook_event_name"} {
				assert.NotEmpty(t, p[k], "%s of %s", k, p["hook_event_name"])
			}
		}
		one, stop1, two, three, stop2 := got[1], got[2], got[3], got[4], got[5]
		assert.Equal(t, "one", one["prompt"])
		assert.Equal(t, "two", two["prompt"])
		assert.Equal(t, "three", three["prompt"])
		assert.NotEqual(t, two["prompt_id"], three["prompt_id"], "each message has its own prompt_id")
		assert.Equal(t, one["prompt_id"], stop1["prompt_id"])
		assert.Equal(t, three["prompt_id"], stop2["prompt_id"], "the Stop carries the last prompt_id")
		assert.Equal(t, "first done", stop1["last_assistant_message"])
		assert.Equal(t, "batch done", stop2["last_assistant_message"])
		assert.Equal(t, false, stop2["stop_hook_active"])
		assert.Equal(t, []string{"submit:one", "queued:two", "queued:three"}, modes(m.entries(3)))
	})
}

func TestClaudeEscInterrupts(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		settings, out := claudeHooks(t, "UserPromptSubmit")
		opt := claudeOpts()
		opt.Settings = settings
		m := startMock(t, opt, "on *\n  think 5s\n  say never\n")
		m.expect("❯\u00a0")
		m.submit("long job")
		m.expect("esc to interrupt")
		// Sent to the model (after its hook), then interrupted.
		assert.Len(t, m.entries(1), 1)
		m.send("\x1b")
		m.expect("Interrupted")
		m.expect("❯\u00a0long job\r\n")
		m.expect("? for shortcuts")
		// The prompt put back is submitted again by Enter. Hooks run in order,
		// so its hook right after the first means none ran for the interrupt.
		m.send("\r")
		m.expect("esc to interrupt")
		assert.Equal(t, []string{"UserPromptSubmit", "UserPromptSubmit"}, events(payloads(t, out, 2)), "no hook on an interrupt")
		assert.Equal(t, []string{"submit:long job", "submit:long job"}, modes(m.entries(2)))
	})
}

func TestClaudeFailureAndPermissionHooks(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		settings, out := claudeHooks(t, "StopFailure", "PermissionRequest", "Notification")
		opt := claudeOpts()
		opt.Settings, opt.NotifyDelay = settings, 100*time.Millisecond
		m := startMock(t, opt, "on /fail/\n  fail server_error\non *\n  permission rm -rf build\n  say removed\n")
		m.expect("❯\u00a0")
		m.submit("fail now")
		m.expect("● API Error: 500 ")
		got := payloads(t, out, 1)
		require.Equal(t, []string{"StopFailure"}, events(got))
		assert.Equal(t, "server_error", got[0]["error"])
		assert.Contains(t, got[0]["last_assistant_message"], "API Error: 500")
		assert.NotEmpty(t, got[0]["prompt_id"])
		assert.NotContains(t, got[0], "error_type")

		m.submit("clean up")
		m.expect(" Do you want to proceed?\r\n ❯ 1. Yes\r\n")
		m.expect(" Esc to cancel · Tab to amend")
		got = payloads(t, out, 3)
		require.Equal(t, []string{"StopFailure", "PermissionRequest", "Notification"}, events(got))
		assert.Equal(t, "Bash", got[1]["tool_name"])
		assert.Equal(t, "rm -rf build", got[1]["tool_input"].(map[string]any)["command"])
		assert.NotEmpty(t, got[1]["permission_suggestions"])
		assert.Equal(t, "permission_prompt", got[2]["notification_type"])
		assert.Equal(t, "Claude needs your permission", got[2]["message"])
		m.send("3")
		m.expect("Interrupted")
		// Hooks run in order: the next turn's hook comes right after the
		// Notification, so nothing ran for the refusal.
		m.submit("fail again")
		m.expect("● API Error: 500 ")
		assert.Equal(t, []string{"StopFailure", "PermissionRequest", "Notification", "StopFailure"}, events(payloads(t, out, 4)),
			"no hook on a refused permission")
	})
}

func TestCodexPersona(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		notified := filepath.Join(dir, "notify.jsonl")
		opt := DefaultOptions("codex")
		opt.Notify = []string{"sh", "-c", `printf '%s\n' "$1" >> ` + notified, "sh"}
		m := startMock(t, opt, "on /slow/\n  think 1500ms\n  say slow done\non /perm/\n  permission rm -rf build\n  say removed\non /bad/\n  fail server_error\non *\n  say ok $0\n")
		m.expect("› Ask Codex to do anything")
		m.submit("first")
		m.expect("› first\r\n")
		m.expect("• ok first")
		m.submit("second")
		m.expect("• ok second")
		m.submit("slow")
		m.expect("• Working (")
		m.expect("◦ Working (")
		m.paste("later")
		m.expect("tab to queue message")
		m.send("\t")
		m.expect("• Queued follow-up inputs\r\n  ↳ later")
		m.expect("• slow done")
		m.expect("• ok later")
		m.submit("perm")
		m.expect("› 1. Yes, proceed (y)\r\n  2. Yes, and don't ask again")
		m.expect("Press enter to confirm or esc to cancel")
		m.send("y")
		m.expect("• removed")
		m.submit("bad")
		m.expect(`■ {"error":{"code":null,"message":"mock server_error","type":"server_error"}}`)

		got := payloads(t, notified, 5)
		require.Len(t, got, 5, "one notify per finished turn, none for the error")
		uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
		cwd, _ := os.Getwd()
		for i, p := range got {
			assert.Equal(t, "agent-turn-complete", p["type"])
			assert.Equal(t, "codex-tui", p["client"])
			assert.Equal(t, cwd, p["cwd"])
			assert.Regexp(t, uuid, p["thread-id"])
			assert.Regexp(t, uuid, p["turn-id"])
			assert.Equal(t, got[0]["thread-id"], p["thread-id"], "one thread")
			if i > 0 {
				assert.NotEqual(t, got[i-1]["turn-id"], p["turn-id"])
			}
		}
		assert.Equal(t, []any{"first", "second"}, got[1]["input-messages"], "every user message of the thread")
		assert.Equal(t, "ok second", got[1]["last-assistant-message"])
		assert.Equal(t, []any{"first", "second", "slow", "later", "perm"}, got[4]["input-messages"])
		assert.Equal(t, []string{"submit:first", "submit:second", "submit:slow", "queued:later", "submit:perm", "dialog:1", "submit:bad"}, modes(m.entries(7)))
	})
}

func TestGeminiPersona(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		opt := DefaultOptions("gemini")
		opt.StartDelay, opt.InitPhase = 500*time.Millisecond, false
		m := startMock(t, opt, "on /one/\n  think 1s\n  say first done\non /perm/\n  permission rm -rf build\n  say removed\non *\n  say got [$0]\n")
		// Keys sent during the slow start are read once it is ready.
		m.paste("early")
		m.expect("─\r\n Shift+Tab to accept edits\r\n\r\n > early")
		m.send("\x15") // Ctrl-U clears it
		m.expect(" >   Type your message or @path/to/file")

		m.submit("one")
		m.expect(" > one\r\n")
		m.expectRe(` [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Thinking\.\.\. \(esc to cancel, \ds\)`)
		m.submit("two")
		m.submit("three")
		m.expect("  Queued (press ↑ to edit):\r\n    two\r\n    three\r\n")
		m.expect("✦ first done")
		m.expect(" > two\r\n   \r\n   three\r\n")
		m.expect("✦ got [two\r\n\r\n  three]")

		m.paste(strings.Repeat("line\n", 7) + "end")
		m.expect("[Pasted Text: 8 lines]")
		m.send("\x15")

		m.submit("perm")
		m.expect("│ ● 1. Allow once")
		m.expect("│   3. No, suggest changes (esc)")
		m.send("\x1b")
		m.expect("ℹ Request cancelled.")
		assert.Equal(t, []string{"submit:one", "queued:two", "queued:three", "submit:perm", "dialog:3"}, modes(m.entries(5)))
	})
}

func TestGeminiCompletionMenus(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		opt := DefaultOptions("gemini")
		opt.StartDelay = 0 // ready at once (the start is TestGeminiInitPhase's)
		m := startMock(t, opt, "on *\n  say got [$0]\n")
		m.expect(" >   Type your message")
		// Enter picks the highlighted command and runs it (no prompt).
		m.send("/he")
		m.expect(" help    For help on gemini-cli\r\n theme   Change the theme")
		time.Sleep(100 * time.Millisecond)
		m.send("\r")
		m.expect("│ Basics:")
		// Enter on an @ menu puts the path into the input, not submitting.
		m.send("see @engine_t")
		m.expect(" engine_test.go")
		time.Sleep(100 * time.Millisecond)
		m.send("\r")
		m.expect(" > see @engine_test.go")
		time.Sleep(100 * time.Millisecond)
		m.send("\r")
		m.expect("✦ got [see @engine_test.go]")
		m.send("foo@")
		m.expect(" codebase_investigator")
		time.Sleep(100 * time.Millisecond)
		m.send("\r")
		m.expect(" > foo@codebase_investigator")
		m.send("\x15")
		// Esc closes the menu; Enter then submits the text as typed.
		m.send("/he")
		m.expect(" help    For help on gemini-cli\r\n theme   Change the theme")
		m.send("\x1b")
		time.Sleep(100 * time.Millisecond)
		m.send("\r")
		m.expect("✦ got [/he]")
		assert.Equal(t, []string{"command:/help", "submit:see @engine_test.go "}, modes(m.entries(3))[:2])
	})
}

func TestGeminiStartDialogs(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		opt := DefaultOptions("gemini")
		opt.TrustDialog, opt.Auth = true, true
		m := startMock(t, opt, "")
		m.expect("│ ● 1. Trust folder (")
		m.paste("a prompt")
		m.send("1")
		m.expect("│   ● 2. Use Gemini API Key")
		m.send("\r")
		m.expect("│ Enter Gemini API Key")
		m.paste("k-123")
		m.send("\r")
		m.expect(" >   Type your message or @path/to/file")
		assert.Equal(t, []string{"dialog:1", "dialog:2", "dialog:k-123"}, modes(m.entries(3)))
	})
}

// Claude Code sends a prompt to the model once its UserPromptSubmit hooks
// are done: killed while one ran (2.1.197 against the fake model), it had
// echoed the prompt, but neither the model nor the transcript had it. The
// mock logs the submission then, not at the Enter.
func TestClaudeSendsAfterItsSubmitHooks(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("HOME", dir)
		// The hook says it runs, then waits to be let go: FIFOs, for a
		// sleep would stop the bubble's clock while it runs.
		started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
		require.NoError(t, syscall.Mkfifo(started, 0o600))
		require.NoError(t, syscall.Mkfifo(release, 0o600))
		hook := "cat > /dev/null; echo started > " + started + "; cat " + release + " > /dev/null"
		b, err := json.Marshal(map[string]any{"hooks": map[string]any{"UserPromptSubmit": []map[string]any{{"hooks": []map[string]any{
			{"type": "command", "command": hook}}}}}})
		require.NoError(t, err)
		opt := claudeOpts()
		opt.Settings = filepath.Join(dir, "settings.json")
		require.NoError(t, os.WriteFile(opt.Settings, b, 0o644))
		m := startMock(t, opt, "on *\n  say done\n")
		m.expect("❯\u00a0")
		m.submit("job")
		_, err = os.ReadFile(started)
		require.NoError(t, err)
		logged, err := mocklog.Read(m.log)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		assert.Empty(t, logged, "nothing went to the model while the hook ran")
		require.NoError(t, os.WriteFile(release, []byte("go\n"), 0o600))
		assert.Equal(t, []string{"submit:job"}, modes(m.entries(1)))
	})
}
