package panes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/supervise"
)

// fallbackDir holds the headless resumes' output, one file per try
// (<key>-<try>.out, its .pid and .err, the key a digest of the trigger's
// id: supervise.FileKey): a supervisor that stops while one runs finds it
// there, and no try is started twice.
const fallbackDir = "fallback"

// headlessLimit bounds a headless turn.
const headlessLimit = 30 * time.Minute

// Resume answers t through rt's agent session without its TUI: the
// agent's own headless resume (claude --resume ID -p, codex exec resume
// ID, gemini --resume ID -p) with the envelope, in the runtime's directory
// and environment. After an ACK_TIMEOUT (or AGENT_STALLED: it hangs in a
// turn) the agent in the pane is stopped first, unless someone types
// there: it did not take the trigger, must not take it later, and Codex
// allows one writer of a session. The report says whether the envelope
// reached the agent (headlessReached).
func (e *Effects) Resume(ctx context.Context, rt supervise.Runtime, t supervise.Trigger) supervise.ResumeReport {
	required := func(err error) supervise.ResumeReport {
		return supervise.ResumeReport{Class: supervise.FallbackRequired, Err: err}
	}
	kind := agent.Kind(rt.Agent)
	switch {
	case !agent.Resumable(kind):
		return required(fmt.Errorf("a %s agent has no session to resume", rt.Agent))
	case rt.AgentSession == "":
		return required(errors.New("the agent's own session id is not known (no event named it)"))
	case t.Fallback == nil:
		return required(errors.New("the trigger has no fallback"))
	}
	dir := filepath.Join(e.Info.StateDir, fallbackDir)
	base := fallbackBase(dir, t.ID, t.Fallback.Tries)
	if _, err := os.Stat(base + ".out"); err == nil {
		return e.takeUp(ctx, kind, base)
	}
	ls, err := launch.Read(filepath.Join(e.Info.StateDir, "launch", rt.Role+".json"))
	if err != nil {
		return required(err)
	}
	if t.Fallback.From == supervise.AckTimeout || t.Fallback.From == supervise.AgentStalled {
		e.stopHung(ctx, rt)
	}
	var flags []string
	if kind == agent.Codex {
		flags = []string{"-c", "allow_login_shell=false"} // its tools find party (docs/agents-reference.md)
	}
	argv, err := agent.HeadlessArgv(kind, ls.Argv[0], flags, rt.AgentSession, supervise.Envelope(t))
	if err != nil {
		return required(err)
	}
	ls.Argv = argv
	prog, argv, env, err := ls.Resolve(os.Environ())
	if err != nil {
		return required(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return supervise.ResumeReport{Err: err}
	}
	out, err := os.OpenFile(base+".out", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return supervise.ResumeReport{Err: err}
	}
	defer out.Close()
	errf, err := os.OpenFile(base+".err", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return supervise.ResumeReport{Err: err}
	}
	defer errf.Close()
	cmd := &exec.Cmd{Path: prog, Args: argv, Env: env, Dir: ls.Dir, Stdout: out, Stderr: errf,
		// Its own session: it outlives a supervisor that is killed, and
		// the next one takes its output up.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return required(fmt.Errorf("headless %s: %w", kind, err))
	}
	_ = os.WriteFile(base+".pid", []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-ctx.Done():
		return supervise.ResumeReport{Err: ctx.Err()} // it runs on; the next supervisor reads it
	case werr := <-done:
		r := e.result(kind, base)
		var exit *exec.ExitError
		// A run that ended on its own without the record of a turn failed
		// before the agent read the envelope; one a signal ended may have
		// read it.
		r.Reached = r.Reached || werr != nil && (!errors.As(werr, &exit) || !exit.Exited())
		if r.Err != nil && werr != nil {
			// The agent's exit status says less than its output does:
			// the output is read; the status only when it says nothing.
			r.Err = fmt.Errorf("%w (%v)", r.Err, werr)
		}
		return r
	}
}

// fallbackBase is the path, without its extension, of the files of try
// of trigger id in dir: named by the id's digest, never by its text.
func fallbackBase(dir, id string, try int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d", supervise.FileKey(id), try))
}

// takeUp waits for the try at base that an earlier supervisor started,
// then reads it. How it ended is not known (no exit status): one that
// printed no turn may have read the envelope all the same.
func (e *Effects) takeUp(ctx context.Context, kind agent.Kind, base string) supervise.ResumeReport {
	deadline := e.Clock.Now().Add(headlessLimit)
	for e.Clock.Now().Before(deadline) {
		pid := 0
		if b, err := os.ReadFile(base + ".pid"); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			break // it ended
		}
		if b, err := os.ReadFile(base + ".out"); err == nil {
			if h, _ := agent.ParseHeadless(kind, b); h.Done {
				break
			}
		}
		if err := e.Clock.Sleep(ctx, 200*time.Millisecond); err != nil {
			return supervise.ResumeReport{Err: err}
		}
	}
	r := e.result(kind, base)
	r.Reached = r.Reached || r.Err != nil
	return r
}

// result reads the try at base: its answer, or why it failed. Reached
// says its output records a turn on the envelope (agent.Headless.Ran);
// such a turn that failed has the class TurnFailed.
func (e *Effects) result(kind agent.Kind, base string) supervise.ResumeReport {
	b, err := os.ReadFile(base + ".out")
	if err != nil {
		return supervise.ResumeReport{Err: err}
	}
	msg, _ := os.ReadFile(base + ".err")
	h, err := agent.ParseHeadlessRun(kind, b, msg)
	r := supervise.ResumeReport{Answer: h.Answer, Reached: h.Ran, Err: err}
	switch {
	case err == nil:
	case h.Ran:
		r.Class = supervise.TurnFailed
	case len(strings.TrimSpace(string(msg))) > 0:
		r.Err = fmt.Errorf("%w: %s", err, lastLine(string(msg)))
	}
	return r
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// stopHung ends the agent in rt's pane, which did not take a trigger in
// all its ack windows, unless someone types there; the pane stays (dead)
// and reconciliation brings the agent back, resumed, once the fallback is
// over.
func (e *Effects) stopHung(ctx context.Context, rt supervise.Runtime) {
	if e.Probe(ctx, rt).Class != "" {
		return
	}
	p, err := e.Tmux.Pane(ctx, rt.Pane)
	if err != nil || p.Role != rt.Role || p.Dead || p.PID <= 0 {
		return
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	for i := 0; i < 50; i++ {
		if p, err := e.Tmux.Pane(ctx, rt.Pane); err != nil || p.Dead {
			return
		}
		if e.Clock.Sleep(ctx, 20*time.Millisecond) != nil {
			return
		}
	}
}

// Spawn starts a fresh agent (a new session) in rt's pane, unless someone
// types there: that would end their draft.
func (e *Effects) Spawn(ctx context.Context, rt supervise.Runtime) (string, error) {
	if p := e.Probe(ctx, rt); p.Class == supervise.OperatorBusy {
		return "", fmt.Errorf("someone is busy in the pane (%s); a fresh agent would end their work", p.Why)
	}
	return e.Restart(ctx, rt, false)
}
