package mockagents

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/script"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mock is a persona running in-process: the test types into a pipe and
// reads the screen the engine writes. Pipes rather than a pseudo-terminal,
// because it runs in a synctest bubble (inBubble; startMock must be called
// in one), where the engine's timers and the test's sleeps run on a
// virtual clock: a quirk window of 100 ms is then exactly 100 ms, however
// loaded the machine, and a test of a 15 s window takes no time.
type mock struct {
	t      *testing.T
	in     *io.PipeWriter
	screen *screen
	log    string
	done   chan int
	exited chan struct{} // closed when run returned
	e      *engine
}

// inBubble runs f in a synctest bubble: time stands still while anything
// in it runs and jumps to the next timer when all of it waits, so sleeps
// and the engine's quirk windows take no real time and cannot flake.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// screen is everything the engine wrote; expect consumes it up to each
// match, as a terminal expecter does.
type screen struct {
	mu      sync.Mutex
	buf     []byte
	changed chan struct{} // closed and replaced at each write
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

// match finds the first match of find in what is unread, consuming it up
// to the match's end.
func (s *screen) match(find func([]byte) []int) (string, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if loc := find(s.buf); loc != nil {
		got := string(s.buf[:loc[1]])
		s.buf = s.buf[loc[1]:]
		return got, nil
	}
	return "", s.changed
}

func startMock(t *testing.T, opt Options, text string) *mock {
	t.Helper()
	inR, inW := io.Pipe()
	m := &mock{t: t, in: inW, screen: &screen{changed: make(chan struct{})}, log: filepath.Join(t.TempDir(), "mock.log"),
		done: make(chan int, 1), exited: make(chan struct{})}
	opt.LogPath = m.log
	if text != "" {
		s, err := script.Parse("test.script", text)
		require.NoError(t, err)
		opt.Script = s
	}
	e := newEngine(opt, m.screen, func() (int, int) { return 80, 24 })
	m.e = e
	go func() {
		m.done <- e.run(inR, nil)
		close(m.exited)
	}()
	t.Cleanup(func() {
		// End the engine and, once what it started has settled, its hook
		// runner, so that nothing of it outlives the test (a bubble
		// requires that).
		inW.Close()
		<-m.exited
		synctest.Wait()
		close(e.hooks.queue)
	})
	return m
}

// expectMatch waits up to 10 s for find to match the screen.
func (m *mock) expectMatch(what string, find func([]byte) []int) string {
	m.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, changed := m.screen.match(find)
		if changed == nil {
			return got
		}
		select {
		case <-changed:
		case <-deadline:
			m.screen.mu.Lock()
			last := string(m.screen.buf)
			m.screen.mu.Unlock()
			require.FailNow(m.t, fmt.Sprintf("waiting for %s", what), "unread screen: %q", last)
		}
	}
}

func (m *mock) expect(s string) {
	m.t.Helper()
	m.expectMatch(fmt.Sprintf("%q", s), func(b []byte) []int {
		if i := bytes.Index(b, []byte(s)); i >= 0 {
			return []int{i, i + len(s)}
		}
		return nil
	})
}

func (m *mock) send(s string) {
	m.t.Helper()
	_, err := io.WriteString(m.in, s)
	require.NoError(m.t, err)
}

func (m *mock) paste(s string) { m.send("\x1b[200~" + s + "\x1b[201~") }

// entries waits until the log has n entries, then a little more to catch
// extra ones.
func (m *mock) entries(n int) []mocklog.Entry {
	m.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, _ := mocklog.Read(m.log)
		if len(e) >= n || time.Now().After(deadline) {
			time.Sleep(200 * time.Millisecond)
			e, _ = mocklog.Read(m.log)
			return e
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func claudeOpts() Options { return DefaultOptions("claude") }

func TestIdleScreens(t *testing.T) {
	for _, tt := range []struct {
		persona string
		want    []string
	}{
		{"claude", []string{"\x1b[?2004h", "Welcome to Claude Code", "❯\u00a0", "? for shortcuts · ← for agents"}},
		{"codex", []string{"\x1b[?2004h", ">_ OpenAI Codex", "› Ask Codex to do anything", "  ← for agents · ? for shortcuts"}},
		{"gemini", []string{"\x1b[?2004h", "─────\r\n Shift+Tab to accept edits\r\n\r\n >   Type your message or @path/to/file", "workspace (/directory)", "/model"}},
		{"generic", []string{"\x1b[?2004h", "mock> "}},
	} {
		t.Run(tt.persona, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				m := startMock(t, DefaultOptions(tt.persona), "")
				for _, w := range tt.want {
					m.expect(w)
				}
			})
		})
	}
}

func TestPasteThenEnterIsLoggedByteExact(t *testing.T) {
	corpus := []string{
		`it's "quoted" $(rm -rf /) ` + "`id`" + ` $HOME end;`,
		"-n leading dash",
		"tabs\tand\nnew lines\n\tindented",
		"emoji 🎉 and CJK 日本語",
		strings.Repeat("0123456789abcdef $(x) 日本\n", 4000), // ~100 KB
	}
	for _, persona := range []string{"claude", "codex"} {
		t.Run(persona, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				opt := claudeOpts()
				opt.Persona = persona
				m := startMock(t, opt, "on *\n  say ok\n")
				m.expect("\x1b[?2004h")
				for _, text := range corpus {
					m.paste(text)
					time.Sleep(150 * time.Millisecond)
					m.send("\r")
					m.expect("ok")
				}
				got := m.entries(len(corpus))
				require.Len(t, got, len(corpus))
				for i, e := range got {
					assert.Equal(t, corpus[i], e.Text, "entry %d", i)
					assert.Equal(t, "submit", e.Mode)
					assert.Equal(t, persona, e.Agent)
				}
			})
		})
	}
}

func TestClaudeEnterQuirks(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		m := startMock(t, claudeOpts(), "on *\n  say ok\n")
		m.expect("❯\u00a0")
		// An Enter in the same read as the paste's end is lost.
		m.send("\x1b[200~first\x1b[201~\r")
		time.Sleep(150 * time.Millisecond)
		assert.Empty(t, m.entries(0))
		// So is an Enter right after the paste (the guard window).
		m.paste(" second")
		m.send("\r")
		assert.Empty(t, m.entries(0))
		// After the guard window Enter submits, once.
		time.Sleep(150 * time.Millisecond)
		m.send("\r")
		got := m.entries(1)
		require.Len(t, got, 1)
		assert.Equal(t, "first second", got[0].Text)
	})
}

func TestClaudePastePlaceholder(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		m := startMock(t, claudeOpts(), "")
		m.expect("❯\u00a0")
		m.paste(strings.Repeat("x", 900))
		m.expect("[Pasted text #1]")
		m.paste("a\nb\nc\nd\ne")
		m.expect("[Pasted text #2 +4 lines]")
	})
}

func TestCodexPasteBurstWindow(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		m := startMock(t, DefaultOptions("codex"), "on *\n  say ok\n")
		m.expect("› Ask Codex")
		// Typed fast (one read) and Enter at once: Enter is a newline.
		m.send("abc")
		m.send("\r")
		time.Sleep(200 * time.Millisecond)
		assert.Empty(t, m.entries(0))
		m.send("\r")
		got := m.entries(1)
		require.Len(t, got, 1)
		assert.Equal(t, "abc\n", got[0].Text)
	})
}

func TestQueueWhileBusy(t *testing.T) {
	t.Run("claude queues on Enter", func(t *testing.T) {
		inBubble(t, func(t *testing.T) {
			m := startMock(t, claudeOpts(), "on /one/\n  think 1s\n  say first done\non *\n  say second done\n")
			m.expect("❯\u00a0")
			m.paste("one")
			time.Sleep(150 * time.Millisecond)
			m.send("\r")
			m.expect("esc to interrupt")
			m.paste("two")
			time.Sleep(150 * time.Millisecond)
			m.send("\r")
			m.expect("  ❯ two\r\n")
			m.expect("Press up to edit queued messages")
			m.expect("second done")
			got := m.entries(2)
			require.Len(t, got, 2)
			assert.Equal(t, []string{"submit", "queued"}, []string{got[0].Mode, got[1].Mode})
		})
	})
	t.Run("codex queues on Tab and steers on Enter", func(t *testing.T) {
		inBubble(t, func(t *testing.T) {
			m := startMock(t, DefaultOptions("codex"), "on *\n  think 2s\n  say done\n")
			m.expect("› Ask Codex")
			m.paste("one")
			m.send("\r")
			m.expect("Working")
			m.paste("two")
			m.expect("tab to queue message")
			m.send("\t")
			m.paste("three")
			m.send("\r")
			got := m.entries(3)
			require.Len(t, got, 3)
			assert.Equal(t, []string{"submit", "queued", "steer"}, []string{got[0].Mode, got[1].Mode, got[2].Mode})
		})
	})
}

func TestTrustDialog(t *testing.T) {
	for _, tt := range []struct {
		name, keys string
		exit       int
	}{
		{"2 exits", "2", 1},
		{"Esc exits", "\x1b", 1},
		{"arrow down then Enter exits", "\x1b[B\r", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				opt := claudeOpts()
				opt.TrustDialog = true
				m := startMock(t, opt, "")
				m.expect(" ❯ 1. Yes, I trust this folder")
				m.send(tt.keys)
				select {
				case code := <-m.done:
					assert.Equal(t, tt.exit, code)
				case <-time.After(5 * time.Second):
					t.Fatal("the mock did not exit")
				}
			})
		})
	}
	t.Run("1 trusts and text typed into the dialog is not submitted", func(t *testing.T) {
		inBubble(t, func(t *testing.T) {
			opt := claudeOpts()
			opt.TrustDialog = true
			m := startMock(t, opt, "")
			m.expect("Yes, I trust this folder")
			m.paste("not a prompt")
			m.send("1")
			m.expect("❯\u00a0")
			got := m.entries(1)
			require.Len(t, got, 1)
			assert.Equal(t, "dialog", got[0].Mode)
			assert.Equal(t, "1", got[0].Text)
		})
	})
}

func TestPermissionDialog(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		m := startMock(t, claudeOpts(), "on *\n  permission rm -rf build\n  say cleaned\n")
		m.expect("❯\u00a0")
		m.paste("clean")
		time.Sleep(150 * time.Millisecond)
		m.send("\r")
		m.expect("Do you want to proceed?")
		m.expect("❯ 1. Yes")
		m.send("1")
		m.expect("cleaned")
	})
}

func TestCrashExitStatus(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		m := startMock(t, Options{Persona: "generic"}, "on *\n  crash 3\n")
		m.expect("mock> ")
		m.send("boom\r")
		select {
		case code := <-m.done:
			assert.Equal(t, 3, code)
		case <-time.After(5 * time.Second):
			t.Fatal("the mock did not crash")
		}
	})
}
