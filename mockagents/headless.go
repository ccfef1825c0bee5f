package mockagents

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/script"
)

// headless is a run of a mock agent without its TUI, as the real agents
// run one turn and print it as JSON: claude and gemini -p PROMPT
// --output-format json (with --resume ID), codex exec --json [resume ID]
// PROMPT. The turn's answer is the script's (its say steps; a fail step
// fails the turn); the prompt goes to the mock log as a submit without a
// pane, as the fake model logs a headless real agent's.
type headless struct {
	prompt string
	resume string
}

// headlessOf reads a headless run from the arguments after the program.
func headlessOf(persona string, args []string) (headless, bool) {
	var h headless
	switch persona {
	case "claude", "gemini":
		found := false
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-p", "--print", "--prompt":
				if i+1 < len(args) {
					h.prompt, found = args[i+1], true
					i++
				}
			case "--resume":
				if i+1 < len(args) {
					h.resume = args[i+1]
					i++
				}
			}
		}
		return h, found
	case "codex":
		at := -1
		for i, a := range args {
			if a == "exec" {
				at = i
				break
			}
		}
		if at < 0 {
			return h, false
		}
		var words []string
		for i := at + 1; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-c" || a == "--config" || a == "-m" || a == "--model":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				words = append(words, a)
			}
		}
		if len(words) > 0 && words[0] == "resume" {
			if len(words) > 1 {
				h.resume = words[1]
			}
			words = words[min(2, len(words)):]
		}
		if len(words) > 0 {
			h.prompt = words[len(words)-1]
		}
		return h, true
	}
	return h, false
}

// run answers the turn and prints it in the agent's own JSON; it returns
// the exit status.
func (h headless) run(opt Options, stdout, stderr io.Writer) int {
	session := h.resume
	if session == "" {
		session = newUUID()
	}
	if opt.Persona == "codex" && h.prompt == "" {
		fmt.Fprintln(stderr, "Error: no prompt given")
		return 1
	}
	if opt.Persona == "codex" && h.resume != "" && threadWriter(h.resume) != 0 {
		fmt.Fprintf(stderr, "Error: thread/resume: thread/resume failed: thread %s already has an active writer (code -32600)\n", h.resume)
		return 1
	}
	if opt.Persona == "claude" && h.resume != "" {
		// The real claude resumes only a session whose transcript it
		// finds, else it says so on stderr and prints nothing (measured
		// on the pinned 2.1.197).
		if _, err := os.Stat(claudeTranscriptPath(h.resume)); err != nil {
			fmt.Fprintf(stderr, "No conversation found with session ID: %s\n", h.resume)
			return 1
		}
	}
	_ = mocklog.Append(opt.LogPath, mocklog.Entry{Agent: opt.Persona, Seq: 1, Mode: "submit", Text: h.prompt, Time: time.Now().UTC()})
	steps, groups := opt.Script.Plan(h.prompt)
	var answer []string
	failed := ""
	for _, st := range steps {
		switch st.Kind {
		case "think":
			time.Sleep(st.Dur)
		case "say":
			answer = append(answer, script.Expand(st.Arg, groups))
		case "fail":
			failed = "mock: the turn failed: " + st.Arg
		case "crash":
			return st.Code
		case "hang", "freeze":
			select {}
		}
	}
	text := strings.Join(answer, "\n")
	enc := json.NewEncoder(stdout)
	switch opt.Persona {
	case "claude":
		result := text
		if failed != "" {
			result = failed
		}
		_ = enc.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": failed != "", "num_turns": 1,
			"result": result, "session_id": session})
	case "gemini":
		out := map[string]any{"session_id": session, "response": text}
		if failed != "" {
			// The real gemini prints a failed turn's object on stderr,
			// after the error's stack trace, and nothing on stdout
			// (measured on the pinned 0.61.0, a model error 500).
			out = map[string]any{"session_id": session, "error": map[string]any{"type": "Error", "message": failed, "code": 500}}
			fmt.Fprintf(stderr, "Error when talking to Gemini API %s\n    at Turn.run (gemini.js:1:1) {\n  status: 500\n}\n", failed)
			enc = json.NewEncoder(stderr)
		}
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	case "codex":
		_ = enc.Encode(map[string]any{"type": "thread.started", "thread_id": session})
		_ = enc.Encode(map[string]any{"type": "turn.started"})
		if failed != "" {
			_ = enc.Encode(map[string]any{"type": "turn.failed", "error": map[string]any{"message": failed}})
			return 1
		}
		_ = enc.Encode(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "agent_message", "text": text}})
		_ = enc.Encode(map[string]any{"type": "turn.completed", "usage": map[string]any{}})
	}
	if failed != "" {
		return 1
	}
	return 0
}
