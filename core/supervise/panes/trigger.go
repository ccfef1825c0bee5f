package panes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/wait"
)

// Probe says whether an operator is busy in rt's pane: text of theirs in
// the input box, a dialog or menu, copy mode (each holds the pane), or a
// key press of a client showing the pane within the quiet window.
func (e *Effects) Probe(ctx context.Context, rt supervise.Runtime) supervise.Probed {
	held := func(why string) supervise.Probed {
		return supervise.Probed{Class: supervise.OperatorBusy, Why: why, Held: true}
	}
	p, screen, err := e.Tmux.Inspect(ctx, rt.Pane)
	switch {
	case errors.Is(err, mux.ErrNoPane):
		return supervise.Probed{Class: supervise.TargetNotFound, Why: err.Error()}
	case err != nil:
		return supervise.Probed{Class: supervise.SendKeysError, Why: err.Error()}
	case p.Role != rt.Role:
		return supervise.Probed{Class: supervise.TargetNotFound, Why: fmt.Sprintf("pane %s holds role %q now", rt.Pane, p.Role)}
	case p.Dead:
		return supervise.Probed{Class: supervise.PaneDead, Why: "the agent's pane is dead"}
	case p.InMode:
		return held("the pane is in copy mode")
	}
	profile := talk.Profile(e.Config, p)
	st := observe.Read(profile, p, screen)
	switch {
	case st.Dialog != "":
		return held("a dialog is open: " + st.Dialog)
	case st.Menu:
		return held("a menu is open over the input box")
	case st.HasInput && strings.TrimSpace(st.Input) != "":
		return held("the input box holds text that is not ours")
	}
	if last, shown, err := e.Tmux.LastKey(ctx, rt.Pane); err == nil && shown {
		if ago := e.Clock.Now().Sub(last); ago < e.Config.Supervise.QuietWindow {
			return supervise.Probed{Class: supervise.OperatorBusy, Why: fmt.Sprintf("a client showing the pane had a key press %s ago", ago.Round(time.Second))}
		}
	}
	return supervise.Probed{}
}

// talkDeps are the turn helpers of talk over the session.
func (e *Effects) talkDeps() talk.Deps {
	return talk.Deps{Mux: e.Tmux, Clock: e.Clock, Getenv: e.Getenv, Config: e.Config, StateDir: e.Info.StateDir}
}

// Prepare makes the envelope ready for rt's agent, its turn starting now:
// the turn is placed where the pane stands now (wait.NewMark), the
// position of the paste that follows. The loop saves the record before it
// sends, and Send gets no record to place it later, so the rows are read
// here, just before the delivery: they differ from the paste's only when
// the pane prints in between, which a ready agent does not.
func (e *Effects) Prepare(ctx context.Context, rt supervise.Runtime, text string) (string, *supervise.TurnRecord, error) {
	p, err := e.pane(ctx, rt)
	if err != nil {
		return "", nil, err
	}
	d := e.talkDeps()
	text, spec, err := d.NewSpec(p, text, false)
	if err != nil {
		return "", nil, err
	}
	turn := &supervise.TurnRecord{Pane: p.ID, Offset: spec.Offset, Nonce: spec.Nonce, Prompt: spec.Prompt, Hooks: spec.Hooks,
		Since: spec.Since, Rollouts: spec.Rollouts, PID: p.PID}
	// Without a mark the echoed nonce alone places a marker turn; a
	// screen source (Gemini's) reads its answer after it.
	turn.Mark, _ = wait.NewMark(ctx, e.Tmux, p.ID)
	return text, turn, nil
}

// Send delivers text once to rt's pane through the delivery path.
func (e *Effects) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	e.killPoint(ctx, "record")
	p, err := e.pane(ctx, rt)
	if err != nil {
		return supervise.SendReport{Class: supervise.TargetNotFound, Err: err}
	}
	d := e.Deliverer(map[string]string{p.ID: rt.Role})
	pasted := false
	d.Step = func(step string) {
		pasted = pasted || step == "paste"
		e.killPoint(ctx, step)
	}
	res, err := d.Send(ctx, e.request(rt, p, text))
	e.killPoint(ctx, "confirm")
	r := supervise.SendReport{Acked: res.Via == "event", Pasted: pasted, Err: err}
	if err == nil {
		r.Outcome = string(res.Outcome)
		r.Note = res.WentWith()
		return r
	}
	switch {
	case errors.Is(err, deliver.ErrUnconfirmed):
		r.Outcome, r.Reached = string(deliver.Unconfirmed), true
	case errors.Is(err, deliver.ErrNotAgent):
		r.Class = supervise.FallbackRequired
	case errors.Is(err, deliver.ErrPaneDead), errors.Is(err, deliver.ErrNotRunning):
		r.Class = supervise.PaneDead
	case errors.Is(err, mux.ErrNoPane):
		r.Class = supervise.TargetNotFound
	case errors.Is(err, deliver.ErrInputBusy), errors.Is(err, deliver.ErrDialog):
		r.Class = supervise.OperatorBusy
	default:
		r.Class = supervise.SendKeysError
	}
	return r
}

// request is the delivery of text to rt's pane p. A trigger's text may be
// an agent's (a runtime's trigger, a bridge relaying one): only agents get
// it, unless the user opted the role in.
func (e *Effects) request(rt supervise.Runtime, p mux.Pane, text string) deliver.Request {
	return deliver.Request{Pane: p.ID, Profile: talk.Profile(e.Config, p), Text: text,
		AgentsOnly: !slices.Contains(e.Config.AllowRoles, rt.Role)}
}

// Reclaim finds what a supervisor that stopped mid-delivery left of t: an
// envelope the agent's events (or Codex's rollout) show taken reached it;
// else the text of t.Turn in the input box is party's own paste, taken
// back (deliver.Reclaim), and t goes again; else the envelope on screen
// (its echo above the box) reached it.
func (e *Effects) Reclaim(ctx context.Context, rt supervise.Runtime, t supervise.Trigger) (supervise.Sighting, error) {
	s := e.Look(ctx, rt, t)
	if s.Ack == supervise.AckEvent || t.Turn == nil || t.Turn.Prompt == "" {
		return s, nil
	}
	p, err := e.pane(ctx, rt)
	if err != nil || p.Dead {
		return s, nil
	}
	d := e.Deliverer(map[string]string{p.ID: rt.Role})
	held, err := d.Reclaim(ctx, e.request(rt, p, t.Turn.Prompt))
	if held {
		s.Reached, s.InBox = false, true
	}
	return s, err
}

// killPoint is a test-only crash point: when PARTY_TEST_KILL_DIR is set
// and holds a file named step, the supervisor removes it and kills itself
// with SIGKILL right after that step of a delivery (record, paste, check,
// enter, confirm): once per file a test puts there. The supervise_crash
// scenarios stop it so between each pair of steps. A file named
// pause-STEP holds the delivery there instead, until the test removes it
// (at most two minutes; paused-STEP says it is held): the scenario then
// acts between two steps, as an operator typing after the last look.
func (e *Effects) killPoint(ctx context.Context, step string) {
	dir := e.Getenv("PARTY_TEST_KILL_DIR")
	if dir == "" {
		return
	}
	pause := filepath.Join(dir, "pause-"+step)
	if _, err := os.Stat(pause); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "paused-"+step), nil, 0o600)
		for end := e.Clock.Now().Add(2 * time.Minute); e.Clock.Now().Before(end); {
			if _, err := os.Stat(pause); err != nil || e.Clock.Sleep(ctx, 20*time.Millisecond) != nil {
				break
			}
		}
	}
	if os.Remove(filepath.Join(dir, step)) != nil {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// Await waits for the answer of turn, as talk --wait would. A turn whose
// pane is gone, or runs another process than the agent that took it (its
// tmux server died and a new one reuses the pane ids), died with that
// agent: PANE_DEAD at once, not a wait for an answer that never comes.
func (e *Effects) Await(ctx context.Context, rt supervise.Runtime, turn supervise.TurnRecord) (string, supervise.Class, error) {
	p, err := e.pane(ctx, rt)
	if errors.Is(err, mux.ErrNoPane) || errors.Is(err, mux.ErrNoServer) {
		// The agent that took the turn went with its pane.
		return "", supervise.PaneDead, fmt.Errorf("the agent that took the turn is gone: %w", err)
	}
	if err != nil {
		return "", supervise.TargetNotFound, err
	}
	if turn.PID != 0 && (p.ID != turn.Pane || p.PID != turn.PID) {
		return "", supervise.PaneDead, fmt.Errorf("the agent that took the turn (pane %s, pid %d) is gone; %s runs pid %d now: %w",
			turn.Pane, turn.PID, p.ID, p.PID, deliver.ErrPaneDead)
	}
	var (
		wake  <-chan struct{}
		waker *state.Waiter
	)
	if w, err := state.ListenSession(e.Getenv, e.Info.StateDir); err == nil {
		defer w.Close()
		wake, waker = w.C, w
	}
	d := e.talkDeps()
	t := d.Turn(ctx, e.Tmux, p, talk.Spec{Offset: turn.Offset, Hooks: turn.Hooks, Nonce: turn.Nonce, Prompt: turn.Prompt,
		Since: turn.Since, Rollouts: turn.Rollouts})
	t.Marked(turn.Mark)
	// The agent's hooks may have failed to record the turn's events
	// before this wait listens (its send returns after the first): the
	// note they left says so, and the wait reads the transcript or screen.
	w := &wait.Waiter{Mux: e.Tmux, Clock: e.Clock, Wake: wake, Poll: e.Config.PollInterval,
		Unheard: wait.SessionUnheard(waker, e.Getenv, e.Info.StateDir)}
	res, err := w.Wait(ctx, t, e.Config.Supervise.TurnTimeout)
	if err != nil {
		if errors.Is(err, deliver.ErrPaneDead) || errors.Is(err, mux.ErrNoPane) {
			return "", supervise.PaneDead, err
		}
		code := e.Classify(err)
		return "", supervise.Class(code), err
	}
	return res.Answer, "", nil
}

// Look reads what rt's events since the trigger's turn began and its pane
// show of t: the envelope, an ack, whether the agent is idle, its session.
func (e *Effects) Look(ctx context.Context, rt supervise.Runtime, t supervise.Trigger) supervise.Sighting {
	var s supervise.Sighting
	mark := supervise.EnvelopeMark(t.ID)
	var offset int64
	if t.Turn != nil {
		offset = t.Turn.Offset
	}
	observe.Events{Path: filepath.Join(e.Info.StateDir, state.EventLog)}.Each(rt.Pane, offset, func(ev hook.Event) bool {
		own := len(ev.Prompts) == 0
		for _, p := range ev.Prompts {
			if strings.Contains(p, mark) && (ev.Kind == hook.PromptSubmit || ev.Kind == hook.TurnComplete) {
				s.Reached, s.Ack = true, supervise.AckEvent
			}
			own = own || strings.HasPrefix(strings.TrimSpace(p), mark)
		}
		// The session of an event that is about other prompts may be
		// another thread's: the real Codex's title thread notifies with
		// its own thread id and a prompt that quotes the envelope.
		if ev.Session != "" && own {
			s.Session = ev.Session
		}
		return true
	})
	p, err := e.Tmux.Pane(ctx, rt.Pane)
	gone := err != nil || p.Dead
	if s.Ack == "" && agent.Kind(rt.Agent) == agent.Codex {
		pid := p.PID
		if gone {
			pid = 0 // its process is gone: its rollouts of these days
		}
		if thread, ok := e.codexTook(pid, mark); ok {
			s.Reached, s.Ack = true, supervise.AckEvent
			if s.Session == "" {
				s.Session = thread
			}
		}
	}
	if gone {
		return s
	}
	screen, err := e.Tmux.Capture(ctx, rt.Pane, e.Config.CaptureLines)
	if err != nil {
		return s
	}
	if strings.Contains(screen, mark) {
		s.Reached = true
	}
	if s.Ack == "" && ackLineIn(screen, mark, supervise.AckLineOf(t.ID)) {
		s.Ack = supervise.AckLine
	}
	if s.Ack == "" && t.Turn != nil && strings.Contains(screen, wait.Marker(t.Turn.Nonce)) {
		// The turn it started has ended with its marker (the prompt's
		// echo names the marker's halves apart, never whole): an agent
		// without hooks that answered as its last ack window ended is
		// idle by then, and is not wedged. The wait reads the answer.
		s.Reached, s.Ack = true, supervise.AckAnswer
	}
	st := observe.Read(talk.Profile(e.Config, p), p, lastScreen(screen, p.Height))
	s.Idle = !st.Busy && st.HasInput && strings.TrimSpace(st.Input) == "" && st.Dialog == ""
	s.Busy = st.Busy && st.Dialog == ""
	return s
}

// lastScreen is the visible part (the last height lines) of a capture
// with history.
func lastScreen(capture string, height int) string {
	lines := strings.Split(capture, "\n")
	if height > 0 && len(lines) > height {
		lines = lines[len(lines)-height:]
	}
	return strings.Join(lines, "\n")
}

// ackLineIn says whether screen shows ack as a line of its own (after an
// agent's glyph) below the echo of the envelope marked mark, when that is
// still on screen: the envelope's own text never acks it.
func ackLineIn(screen, mark, ack string) bool {
	if i := strings.LastIndex(screen, mark); i >= 0 {
		screen = screen[i:]
		if j := strings.Index(screen, "[/BRIDGE_TRIGGER]"); j >= 0 {
			screen = screen[j:]
		}
	}
	for _, line := range strings.Split(screen, "\n") {
		line = strings.TrimLeftFunc(strings.TrimSpace(line), func(r rune) bool {
			return !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9')
		})
		if line == ack {
			return true
		}
	}
	return false
}

// codexTook says whether the Codex of process pid took a prompt holding
// mark,
// and the thread (Codex's session) whose rollout says so:
// its rollout transcript records the user message when the turn that
// carries it starts (Codex 0.169, measured: ~30 ms before the model
// request; a message queued with Tab only once its own turn starts). The
// notify party wires fires only when a turn ends, so without this a
// trigger whose turn outlasted the ack windows failed ACK_TIMEOUT while
// Codex worked on it. The files are those pid's processes hold open
// (talk's wait reads the same), else (pid 0: the pane went) the recent ones
// under $CODEX_HOME.
func (e *Effects) codexTook(pid int, mark string) (string, bool) {
	return wait.CodexTook(wait.CodexRolloutFiles(pid, hook.CodexHome(e.Getenv), e.Clock.Now)(), mark)
}
