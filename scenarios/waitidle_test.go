package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
)

// cmdWaitIdle is `waitidle TARGET` (a role or a pane id): it waits until
// the agent's turn ended, by the agent's own word in its session's event
// log (what its hooks reported through party hook), never by its screen:
// "the busy line is gone" holds before the agent even turned busy.
//
// The turn is the one of the last text party typed into the pane (its
// input event): it ended when a turn-complete or turn-failed event of the
// pane came after it that is that text's (one without prompts, as
// Claude's Stop; or one whose prompt is the text, whitespace aside, as
// Codex's notify — the notify of Codex's title thread quotes the text
// inside a prompt of its own and is not the turn's). A prompt the agent
// took after that end (a prompt-submit) starts another turn. Without a
// turn end there is no idle: a pane party never typed into is idle once
// a turn of its own ended.
//
// Once the events say the turn ended, it waits for the pane's state as
// party observes it (observe.Read with the agent's profile) to be no
// longer busy: Gemini reports AfterAgent while its spinner still runs a
// moment, and a send then would be queued. That check comes after the
// turn's end, so it cannot pass early either.
//
// It is bounded by waitLimit; the timeout shows the pane's events, or
// its last screen.
func cmdWaitIdle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitidle TARGET")
	}
	pane := paneOf(ts, args[0])
	out, errOut, err := runTmux(ts.Getenv, scriptEnv(ts), "display-message", "-p", "-t", pane, "#{@party_state_dir}")
	if err != nil {
		ts.Fatalf("waitidle %s: the session's state dir: %v: %s", args[0], err, errOut)
	}
	dir := strings.TrimSpace(out)
	if dir == "" {
		ts.Fatalf("waitidle %s: pane %s is in no session party started (no @party_state_dir)", args[0], pane)
	}
	out, errOut, err = runTmux(ts.Getenv, scriptEnv(ts), "display-message", "-p", "-t", pane, "#{@party_agent}")
	if err != nil {
		ts.Fatalf("waitidle %s: the pane's agent: %v: %s", args[0], err, errOut)
	}
	profile := agent.Lookup(agent.Kind(strings.TrimSpace(out)))
	path := filepath.Join(dir, state.EventLog)
	deadline := time.Now().Add(waitLimit)
	var t turnState
	for {
		t = readTurn(ts, path, pane)
		if t.idle() {
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitidle %s: pane %s never ended its turn within %s (%s); its events:\n%s", args[0], pane, waitLimit, t.why(), strings.Join(t.seen, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		screen := capture(ts, pane)
		if !observe.Read(profile, mux.Pane{ID: pane}, screen).Busy {
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitidle %s: pane %s ended its turn but still shows it busy after %s; last screen:\n%s", args[0], pane, waitLimit, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Logf("waitidle %s: pane %s idle after %d texts typed in; its last events:\n%s", args[0], pane, t.inputs, strings.Join(last(t.seen, 3), "\n"))
}

func last(s []string, n int) []string {
	return s[max(0, len(s)-n):]
}

// turnState is what a pane's events say of its turn.
type turnState struct {
	input    string // the last text party typed in
	inputs   int
	prompted bool // the agent took a prompt after the last end
	ended    bool // the last input's turn ended (none typed: a turn ended)
	seen     []string
}

func (t turnState) idle() bool { return t.ended && !t.prompted }

func (t turnState) why() string {
	switch {
	case t.inputs == 0 && !t.ended:
		return "party typed nothing into it, and no turn of its own ended"
	case t.prompted:
		return "it took a prompt after its last turn ended"
	}
	return "no turn end after the last text party typed in"
}

// eventLine is a line of the event log: an agent's event (hook.Event) or
// party's own input event, which carries the text.
type eventLine struct {
	hook.Event
	Text string `json:"text"`
}

// readTurn reads the pane's events in path.
func readTurn(ts *testscript.TestScript, path, pane string) turnState {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		ts.Fatalf("waitidle: %v", err)
	}
	return parseTurn(b, pane)
}

// parseTurn reads the turn of pane from an event log's lines.
func parseTurn(log []byte, pane string) turnState {
	var t turnState
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var ev eventLine
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Pane != pane {
			continue
		}
		switch ev.Kind {
		case "input":
			t.input, t.inputs, t.ended, t.prompted = ev.Text, t.inputs+1, false, false
		case hook.PromptSubmit:
			if t.ended || t.inputs == 0 {
				t.prompted = true
			}
		case hook.TurnComplete, hook.TurnFailed:
			if t.inputs == 0 || turnOf(ev.Prompts, t.input) {
				t.ended, t.prompted = true, false
			}
		default:
			continue
		}
		t.seen = append(t.seen, fmt.Sprintf("  %s %s prompts=%q", ev.Kind, ev.Raw, ev.Prompts))
	}
	return t
}

// turnOf says whether a turn end with prompts is the turn of text: no
// prompts (Claude's Stop names none), or one that is text but for
// whitespace (agents trim it, turn tabs into spaces, CRLF into LF).
func turnOf(prompts []string, text string) bool {
	if len(prompts) == 0 {
		return true
	}
	for _, p := range prompts {
		if squeeze(p) == squeeze(text) {
			return true
		}
	}
	return false
}

func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestWaitIdleReadsTheTurn: waitidle's reading of an event log (it runs
// under -short; the real_* scenarios use the command).
func TestWaitIdleReadsTheTurn(t *testing.T) {
	const (
		input     = `{"kind":"input","pane":"%0","text":"first\tline\r\nsecond "}`
		submit    = `{"kind":"prompt-submit","pane":"%0","prompts":["first    line\nsecond"]}`
		stop      = `{"kind":"turn-complete","pane":"%0","raw_event":"Stop"}`
		failed    = `{"kind":"turn-failed","pane":"%0"}`
		notify    = `{"kind":"turn-complete","pane":"%0","prompts":["first line\nsecond"]}`
		title     = `{"kind":"turn-complete","pane":"%0","prompts":["Generate a title.\n\nUser prompt:\nfirst line\nsecond"]}`
		otherPane = `{"kind":"turn-complete","pane":"%1"}`
		tool      = `{"kind":"tool-use","pane":"%0"}`
	)
	for _, tc := range []struct {
		name  string
		lines []string
		idle  bool
	}{
		{"nothing yet", nil, false},
		{"typed in, not ended", []string{input}, false},
		{"taken, at work", []string{input, submit, tool}, false},
		{"Claude's Stop ends it", []string{input, submit, tool, stop}, true},
		{"a failed turn ends it", []string{input, submit, failed}, true},
		{"Codex's notify of the text ends it", []string{input, notify}, true},
		{"Codex's title thread does not", []string{input, title}, false},
		{"the title thread after the end changes nothing", []string{input, notify, title}, true},
		{"another pane's end is not this one's", []string{input, otherPane}, false},
		{"an end before the text is the last turn's", []string{stop, input}, false},
		{"a prompt taken after the end is a new turn", []string{input, stop, submit}, false},
		{"never typed into: idle once a turn of its own ended", []string{submit, stop}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := strings.Join(tc.lines, "\n") + "\n"
			got := parseTurn([]byte(log), "%0")
			if got.idle() != tc.idle {
				t.Errorf("idle: got %v, want %v (%s)", got.idle(), tc.idle, got.why())
			}
		})
	}
}
