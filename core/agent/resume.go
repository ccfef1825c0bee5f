package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoResume is an agent kind that has no session party can resume
// (a shell, a generic TUI).
var ErrNoResume = errors.New("the agent has no resumable session")

// Resumable says whether kind keeps sessions party can resume.
func Resumable(kind Kind) bool {
	switch kind {
	case Claude, Codex, Gemini:
		return true
	}
	return false
}

// ResumeArgv is the launch argv of an interactive agent (program first,
// party's own flags included) changed to resume the agent's session id:
// the agent starts with that conversation on screen and in its context.
// Measured on the pinned agents (docs/agents-reference.md, "Resuming a
// session"): claude --resume ID, codex … resume ID (the subcommand after
// the global -c flags), gemini --resume ID.
func ResumeArgv(kind Kind, argv []string, id string) ([]string, error) {
	if !Resumable(kind) || len(argv) == 0 {
		return nil, fmt.Errorf("resume %s: %w", kind, ErrNoResume)
	}
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	out := slices.Clone(argv)
	switch kind {
	case Codex:
		// A prompt given to the interactive codex would start a new turn
		// in the resumed session; the launch argv has none.
		return append(out, "resume", id), nil
	default:
		return append(out, "--resume", id), nil
	}
}

// HeadlessArgv is the command that runs one turn of prompt in the agent's
// session id without its TUI and prints the answer as JSON: claude
// --resume ID -p PROMPT --output-format json; codex exec
// --skip-git-repo-check --json resume ID PROMPT (its stdin must be empty:
// it reads more of the prompt there); gemini --resume ID -p PROMPT
// --output-format json. bin is the agent's program; flags are party's own
// options of the pane's launch (codex's -c overrides), kept.
func HeadlessArgv(kind Kind, bin string, flags []string, id, prompt string) ([]string, error) {
	if !Resumable(kind) {
		return nil, fmt.Errorf("headless resume %s: %w", kind, ErrNoResume)
	}
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	argv := append([]string{bin}, flags...)
	switch kind {
	case Codex:
		return append(argv, "exec", "--skip-git-repo-check", "--json", "resume", id, prompt), nil
	default:
		return append(argv, "--resume", id, "-p", prompt, "--output-format", "json"), nil
	}
}

// checkSessionID refuses what cannot be an agent's session id: it becomes
// an argument, so it must not read as a flag.
func checkSessionID(id string) error {
	if id == "" || strings.HasPrefix(id, "-") || len(id) > 128 || strings.ContainsAny(id, " \t\r\n/\\") {
		return fmt.Errorf("agent session id %q: %w", id, ErrNoResume)
	}
	return nil
}

// Headless is what a headless turn printed.
type Headless struct {
	Answer  string
	Session string
	// Done says the output was whole: the turn ended (answered or
	// failed). A cut output is a turn that did not end.
	Done bool
	// Ran says the agent ran a turn on the prompt: the output records
	// that turn, answered or failed (claude's result, codex's
	// turn.started, gemini's object with its session). Measured on the
	// pinned agents, what fails before the agent reads the prompt (an
	// unknown session id, a Codex session with another writer) prints
	// only an error on stderr, and no such record.
	Ran bool
}

// ErrHeadlessTurn is a headless turn that ended in an error the agent
// reported.
var ErrHeadlessTurn = errors.New("headless turn failed")

// ParseHeadless reads what HeadlessArgv's command printed on stdout.
func ParseHeadless(kind Kind, out []byte) (Headless, error) {
	switch kind {
	case Claude:
		var r struct {
			Type    string `json:"type"`
			Result  string `json:"result"`
			Session string `json:"session_id"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal(lastJSON(out), &r); err != nil || r.Type != "result" {
			return Headless{}, fmt.Errorf("claude -p printed no result: %w", ErrHeadlessTurn)
		}
		h := Headless{Answer: r.Result, Session: r.Session, Done: true, Ran: true}
		if r.IsError {
			return h, fmt.Errorf("claude: %s: %w", r.Result, ErrHeadlessTurn)
		}
		return h, nil
	case Gemini:
		var r struct {
			Session  string          `json:"session_id"`
			Response *string         `json:"response"`
			Error    json.RawMessage `json:"error"`
		}
		if err := json.NewDecoder(bytes.NewReader(fromObject(out))).Decode(&r); err != nil {
			return Headless{}, fmt.Errorf("gemini -p printed no result: %w", ErrHeadlessTurn)
		}
		h := Headless{Session: r.Session, Done: true, Ran: r.Session != ""}
		if len(r.Error) > 0 && string(r.Error) != "null" {
			return h, fmt.Errorf("gemini: %s: %w", r.Error, ErrHeadlessTurn)
		}
		if r.Response == nil {
			return h, fmt.Errorf("gemini -p printed no response: %w", ErrHeadlessTurn)
		}
		h.Answer = *r.Response
		return h, nil
	case Codex:
		var h Headless
		var failed string
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Thread string `json:"thread_id"`
				Item   struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"item"`
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
				Message string `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			switch ev.Type {
			case "thread.started":
				h.Session = ev.Thread
			case "turn.started":
				h.Ran = true
			case "item.completed":
				if ev.Item.Type == "agent_message" {
					h.Answer = ev.Item.Text
				}
			case "turn.completed":
				h.Done = true
			case "turn.failed":
				h.Done, failed = true, ev.Error.Message
			case "error":
				failed = ev.Message
			}
		}
		switch {
		case failed != "":
			return h, fmt.Errorf("codex: %s: %w", failed, ErrHeadlessTurn)
		case !h.Done:
			return h, fmt.Errorf("codex exec printed no completed turn: %w", ErrHeadlessTurn)
		}
		return h, nil
	}
	return Headless{}, fmt.Errorf("headless %s: %w", kind, ErrNoResume)
}

// ParseHeadlessRun reads what HeadlessArgv's command printed on stdout
// and stderr: gemini prints the object of a turn that failed (a model
// error) on stderr, after its stack trace, and nothing on stdout
// (measured, the pinned gemini-cli 0.61.0: exit status 244).
func ParseHeadlessRun(kind Kind, stdout, stderr []byte) (Headless, error) {
	h, err := ParseHeadless(kind, stdout)
	if h.Ran || kind != Gemini {
		return h, err
	}
	if eh, eerr := ParseHeadless(kind, lastObject(stderr)); eh.Ran {
		return eh, eerr
	}
	return h, err
}

// lastObject is out from the start of its last line that opens a JSON
// object which decodes: what stands before it (a stack trace) is skipped.
func lastObject(out []byte) []byte {
	var starts []int
	for i := 0; i < len(out); {
		if out[i] == '{' {
			starts = append(starts, i)
		}
		nl := bytes.IndexByte(out[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	for k := len(starts) - 1; k >= 0; k-- {
		var v map[string]json.RawMessage
		if json.NewDecoder(bytes.NewReader(out[starts[k]:])).Decode(&v) == nil {
			return out[starts[k]:]
		}
	}
	return nil
}

// lastJSON is the last non-empty line of out (claude prints one).
func lastJSON(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return lines[len(lines)-1]
}

// fromObject is out from its first line that opens a JSON object: gemini
// may print a warning line before it.
func fromObject(out []byte) []byte {
	for i := 0; i < len(out); {
		if out[i] == '{' {
			return out[i:]
		}
		nl := bytes.IndexByte(out[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return out
}
