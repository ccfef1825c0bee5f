package mockagents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partyhq/party/mockagents/script"
)

// Turns: the script runs a turn step by step (think, say, write, run,
// permission, fail, …); the persona says how it starts (hooks, ids), what
// it shows, and how it ends (Stop hooks, notify, AfterAgent, summary).
//
// The model answers a turn in responses: one up to each tool call (write,
// run, permission) and one after the last. The persona records each with
// its usage (responded), as its real agent does: the usage steps of the
// response, wherever in it (script.ResponseUsage), else the defaults.

// response is the model response the running turn's steps are making.
type response struct {
	texts []string     // what it said (its say steps)
	usage script.Usage // its usage steps, merged
}

// toolCall is the tool call that ends a model response.
type toolCall struct {
	name       string         // Bash or Write, as Claude names them
	input      map[string]any // the tool's input (Bash: command, Write: file_path and content)
	permission bool           // the permission step: the agent asks before it runs it
}

// modelResponse is a finished model response, as a persona records it.
type modelResponse struct {
	text   string        // what it said, its say steps joined by newlines
	tokens script.Tokens // its usage
	model  string        // the model a usage step named; "" for the persona's own
	tool   *toolCall     // the tool call that ended it; nil when it ended the turn
}

// startTurn sends messages to the model as one turn. Claude runs its
// UserPromptSubmit hooks first, one per message, while the screen goes on;
// arrived (if any) runs when the messages go to the model, after them.
func (e *engine) startTurn(msgs []string, arrived func()) { e.turn(msgs, true, arrived) }

// turn starts a turn on msgs; user says they are the user's messages
// (echoed, with the persona's hooks: claude's UserPromptSubmit, gemini's
// BeforeAgent), not what the agent sends on its own (claude's bash-mode
// follow-up). The model gets the messages once those hooks are done, as
// the real agents send them (an agent killed while they run sent nothing:
// Claude Code 2.1.197 echoed the prompt and kept it in its input history,
// but neither the model nor the session's transcript had it); arrived
// runs then.
func (e *engine) turn(msgs []string, user bool, arrived func()) {
	e.turns++
	e.gen++
	e.busy, e.busySince = true, time.Now()
	e.prompts = msgs
	e.prompt = msgs[len(msgs)-1]
	e.answer, e.step, e.steps, e.tokens, e.firstToken = nil, 0, nil, 0, false
	if !user {
		e.p.beginTurn(msgs, false, nil)
		e.plan()
		return
	}
	for _, m := range msgs {
		e.addHistory(e.userLine(m)...)
	}
	gen := e.gen
	send := func() {
		e.p.sent(msgs)
		if arrived != nil {
			arrived()
		}
		e.plan()
	}
	resume := func() {
		e.events <- func() {
			if e.gen == gen {
				send()
			}
		}
	}
	if e.p.beginTurn(msgs, true, resume) {
		return
	}
	send()
}

// plan starts the script's answer to the turn's prompt.
func (e *engine) plan() {
	e.steps, e.groups = e.opt.Script.Plan(e.prompt)
	e.step = 0
	e.resp = response{usage: script.ResponseUsage(e.steps)}
	e.next()
}

// respond ends the model response the steps were making, tool being the
// tool call that ends it (nil: the turn's end); the steps after it make
// the next one.
func (e *engine) respond(tool *toolCall) {
	text := strings.Join(e.resp.texts, "\n")
	e.p.responded(modelResponse{text: text, tokens: e.resp.usage.Tokens(text), model: e.resp.usage.Model, tool: tool})
	e.resp = response{usage: script.ResponseUsage(e.steps[e.step:])}
}

// steer is codex's Enter while busy: the model request in flight is
// abandoned and sent again with the new message, in the same turn.
func (e *engine) steer(text string) {
	e.addHistory(e.userLine(text)...)
	e.p.steered(text)
	e.gen++
	e.prompts = append(e.prompts, text)
	e.prompt = text
	e.plan()
}

// next runs steps until one has to wait.
func (e *engine) next() {
	for e.step < len(e.steps) {
		st := e.steps[e.step]
		e.step++
		switch st.Kind {
		case "think":
			e.laterInTurn(st.Dur, e.next)
			return
		case "say":
			text := script.Expand(st.Arg, e.groups)
			e.answer = append(e.answer, text)
			e.resp.texts = append(e.resp.texts, text)
			e.tokens += max(1, utf8.RuneCountInString(text)/4)
			e.firstToken = true
			e.addHistory(e.answerLines(text)...)
			e.p.said(text)
			if strings.Contains(text, "[[/POLI:MSG]]") {
				e.trace("block")
				e.draw()
			}
		case "echo":
			e.addHistory(strings.Split(strings.Join(e.prompts, "\n"), "\n")...)
		case "flood":
			e.flood(st.Size)
		case "marker":
			for _, p := range e.prompts {
				if nonce, ok := script.MarkerNonce(p); ok {
					e.trace("marker")
					e.addHistory("PARTY_DONE_" + nonce)
					e.draw()
				}
			}
		case "usage":
			// Counted by script.ResponseUsage when the response began.
		case "write":
			path, text := st.WriteArgs(e.groups)
			abs, _ := filepath.Abs(path)
			input := map[string]any{"file_path": abs, "content": text}
			e.respond(&toolCall{name: "Write", input: input})
			e.tool("Write", input, "Write("+path+")", func() (string, error) {
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					return "", err
				}
				return fmt.Sprintf("Wrote %d bytes", len(text)), os.WriteFile(abs, []byte(text), 0o644)
			})
			return
		case "run":
			cmd := script.Expand(st.Arg, e.groups)
			input := map[string]any{"command": cmd}
			e.respond(&toolCall{name: "Bash", input: input})
			e.tool("Bash", input, "Bash("+cmd+")", func() (string, error) {
				out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
				return string(out), err
			})
			return
		case "permission":
			cmd := script.Expand(st.Arg, e.groups)
			e.respond(&toolCall{name: "Bash", input: permissionInput(cmd), permission: true})
			e.p.permission(cmd)
			return
		case "fail":
			e.fail(st.Arg)
			return
		case "crash":
			e.quit(st.Code)
			return
		case "hang":
			return
		case "freeze":
			e.endTurn()
			e.draw()
			select {} // the engine's one goroutine stops: nothing is read or drawn again
		}
	}
	e.endTurn()
}

// flood prints size bytes of numbered lines straight to the terminal, in
// place of the live rows, and draws them again below: an agent (or a tool
// it runs) printing far more than a screen holds.
func (e *engine) flood(size int64) {
	e.trace("flood")
	defer e.trace("flooded")
	e.draw() // what came before is printed first
	var b strings.Builder
	b.WriteString("\r")
	if e.liveRows > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", e.liveRows-1)
	}
	b.WriteString("\x1b[J")
	line := 0
	for written := int64(0); written < size; {
		for b.Len() < 64<<10 && written < size {
			n, _ := fmt.Fprintf(&b, "flood %08d %s\r\n", line, strings.Repeat("x", 60))
			written += int64(n)
			line++
		}
		_, _ = io.WriteString(e.out, b.String())
		b.Reset()
	}
	e.liveRows = 1
	e.draw()
}

// tool runs a tool the way the agent does, off the loop (claude's
// PreToolUse hooks may deny it, then do runs, then the PostToolUse hooks
// see its result). The screen shows the call and the start of its output;
// the turn goes on when it is done.
func (e *engine) tool(name string, input map[string]any, call string, do func() (string, error)) {
	gen := e.gen
	run := e.p.toolRunner(name, input)
	go func() {
		out, deny, err := run(do)
		e.events <- func() {
			if e.gen != gen {
				return
			}
			e.p.toolDone(out, err, deny)
			e.addHistory(e.toolLines(call, out, err, deny)...)
			e.next()
		}
	}()
}

// toolLines is how a tool call shows in history.
func (e *engine) toolLines(call, out string, err error, deny string) []string {
	head, sub := e.p.toolLead(call)
	var body []string
	switch {
	case deny != "":
		body = []string{"Error: PreToolUse:" + strings.SplitN(call, "(", 2)[0] + " hook denied this tool: " + deny}
	default:
		body = strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(body) > 5 {
			body = append(body[:5], fmt.Sprintf("… +%d lines", len(body)-5))
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			body = append(body, "Error: Exit code "+strconv.Itoa(ee.ExitCode()))
		} else if err != nil {
			body = append(body, "Error: "+err.Error())
		}
	}
	lines := []string{head}
	for i, l := range body {
		if i == 0 {
			lines = append(lines, sub+l)
		} else {
			lines = append(lines, strings.Repeat(" ", utf8.RuneCountInString(sub))+l)
		}
	}
	return lines
}

// permissionInput is the input of the shell tool call that asks
// permission to run cmd.
func permissionInput(cmd string) map[string]any {
	return map[string]any{"command": cmd, "description": "Run " + firstWord(cmd)}
}

// openPermission opens the permission dialog for cmd. Choosing No ends
// the turn without any hook.
func (e *engine) openPermission(cmd string) {
	d := &dialog{}
	e.p.permissionDialog(cmd, d)
	d.no = len(d.items) - 1
	d.choose = func(item int) {
		e.p.answered(item != d.no, cmd)
		if item == d.no {
			e.stopTurn()
			return
		}
		e.next()
	}
	e.dialog = d
}

// fail ends the turn with an API error: claude runs StopFailure (no
// Stop), codex sends no notify.
func (e *engine) fail(kind string) {
	code := map[string]int{"rate_limit": 429, "server_error": 500, "api_error": 500, "overloaded": 529,
		"authentication_failed": 401, "billing_error": 402, "invalid_request": 400}[kind]
	if code == 0 {
		code = 400
	}
	e.p.fail(kind, code)
	e.stopTurn()
}

// interrupt is Esc during a turn: it stops without any hook or notify
// (gemini: an AfterAgent with no response text); claude puts the prompt
// (and what was queued) back into the input, codex what was queued.
func (e *engine) interrupt() {
	e.p.interrupt()
	e.stopTurn()
}

// endTurn finishes the running turn normally: claude's Stop hooks (the
// busy line says so while they run), codex's notify, gemini's
// AfterAgent; then what was queued is sent.
func (e *engine) endTurn() {
	e.respond(nil)
	if e.p.endTurn(strings.Join(e.answer, "\n")) {
		return // finish comes when the hooks are done
	}
	e.finish()
}

// finish prints the turn's summary and goes idle (or on with the queue).
func (e *engine) finish() {
	e.p.summary(time.Since(e.busySince))
	e.stopTurn()
}

// stopTurn leaves the turn and sends what was queued: claude all of it as
// one turn, gemini merged into one prompt, codex one at a time.
func (e *engine) stopTurn() {
	e.gen++
	e.busy = false
	e.sendQueue()
}

// sendQueue starts a turn on what was queued, if anything: claude all of
// it as one turn, gemini merged into one prompt, codex one at a time.
func (e *engine) sendQueue() {
	if len(e.queue) == 0 {
		return
	}
	var msgs []string
	msgs, e.queue = e.p.takeQueue(e.queue)
	e.startTurn(msgs, nil) // logged as queued when taken
}

// userLine is how a submitted prompt shows in history.
func (e *engine) userLine(text string) []string {
	lines := strings.Split(text, "\n")
	if len(text) > 200 || len(lines) > 4 {
		lines = []string{fmt.Sprintf("[%d chars]", len(text))}
	}
	return e.p.userLines(lines)
}

func (e *engine) answerLines(text string) []string {
	lead := e.p.answerLead()
	lines := strings.Split(text, "\n")
	if lead == "" {
		return lines
	}
	for i := range lines {
		if i == 0 {
			lines[i] = lead + lines[i]
		} else if lines[i] != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return append(lines, "")
}
