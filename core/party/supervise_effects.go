package party

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// paneEffects are the supervisor loop's effects on a real session: tmux
// for the runtimes and their screens, the one delivery path, the agents'
// events and the turn waits of talk.
type paneEffects struct {
	env   *Env
	cfg   config.Config
	info  tmux.SessionInfo
	root  string
	rec   session.Record
	quiet time.Duration

	// sessions are the agents' own session ids by pane, from the event
	// log read up to logRead.
	sessions map[string]string
	logRead  int64
	// pulse is where Pulses read the event log up to (supervise_stall.go).
	pulse struct {
		read    int64
		started bool
	}
}

var _ supervise.Effects = (*paneEffects)(nil)

// Scan lists the agent panes party started in the session: those whose
// role has a runtime token in the session's record.
func (e *paneEffects) Scan(ctx context.Context) ([]supervise.Seen, error) {
	panes, err := e.env.Tmux.ListPanes(ctx, e.info.Name)
	if err != nil {
		return nil, err
	}
	e.learnSessions()
	perWindow := map[string]int{}
	for _, p := range panes {
		perWindow[p.WindowID]++
	}
	var out []supervise.Seen
	for _, p := range panes {
		hash := e.rec.Tokens[p.Role]
		if p.Role == "" || hash == "" || agent.Kind(p.Agent) == agent.Shell {
			continue
		}
		status := supervise.Ready
		if p.Dead {
			status = supervise.Offline
		}
		rt := supervise.Runtime{ID: e.info.Name + "/" + p.Role, Role: p.Role, Workspace: e.rec.Cwd,
			Agent: p.Agent, Session: e.info.Name, Window: p.WindowID, Pane: p.ID,
			Target: targetOf(e.info.Name, p, perWindow[p.WindowID] == 1), PID: p.PID, Status: status, TokenHash: hash, AgentSession: e.sessionOf(p)}
		out = append(out, supervise.Seen{Runtime: rt, RunsAgent: !p.Dead && talk.Profile(e.cfg, p).Runs(p.CurrentCommand)})
	}
	return out, nil
}

// Restart starts rt's agent again from its launch spec with a new token,
// in its dead pane or, when the pane is gone, in a new window; with
// resume, the agent resumes its session (its history on screen).
func (e *paneEffects) Restart(ctx context.Context, rt supervise.Runtime, resume bool) (string, error) {
	exe, err := e.env.Executable()
	if err != nil {
		return "", err
	}
	pane := rt.Pane
	if p, err := e.env.Tmux.Pane(ctx, rt.Pane); err != nil || p.Role != rt.Role {
		pane = "" // gone: a window of its own
	}
	id := ""
	if resume {
		id = rt.AgentSession
	} else {
		delete(e.sessions, rt.Pane) // a fresh agent has a session of its own
	}
	hash, _, err := session.Respawn(ctx, e.env.Tmux, exe, e.info.StateDir, rt.Role, pane, id)
	if err != nil {
		return "", err
	}
	if e.rec.Tokens == nil {
		e.rec.Tokens = map[string]string{}
	}
	e.rec.Tokens[rt.Role] = hash
	return hash, nil
}

// learnSessions reads the events logged since the last look for the
// agents' own session ids (Claude's and Gemini's session_id, Codex's
// thread id).
func (e *paneEffects) learnSessions() {
	if e.sessions == nil {
		e.sessions = map[string]string{}
	}
	path := filepath.Join(e.info.StateDir, state.EventLog)
	end := state.Size(path)
	observe.Events{Path: path}.Each("", e.logRead, func(ev hook.Event) bool {
		// Codex's only about its session's start: one about prompts may
		// be another thread's (its title thread quotes the prompts with an
		// id of its own). Gemini names its session only in its turns'.
		if ev.Session != "" && ev.Pane != "" && (len(ev.Prompts) == 0 || ev.Agent != string(agent.Codex)) {
			e.sessions[ev.Pane] = ev.Session
		}
		return true
	})
	e.logRead = end
}

// sessionOf is the agent session of pane p as its events name it, or, for
// a Codex whose events name none (its notifies carry prompts, and may be
// its title thread's), the thread of the one rollout file it holds open:
// a scan learns it even when no trigger's look did.
func (e *paneEffects) sessionOf(p mux.Pane) string {
	if s := e.sessions[p.ID]; s != "" || p.Dead || agent.Kind(p.Agent) != agent.Codex {
		return s
	}
	files := wait.CodexRolloutFiles(p.PID, hook.CodexHome(e.env.Getenv), e.env.Clock.Now)()
	if len(files) != 1 {
		return ""
	}
	// Kept, so that later scans do not look again (Restart forgets it).
	e.sessions[p.ID] = rolloutThread(files[0])
	return e.sessions[p.ID]
}

// targetOf is pane p's tmux target in session: <session>:<role>.<index>
// where it is alone in a window named for its role (--layout windows),
// else by the window's index.
func targetOf(session string, p mux.Pane, alone bool) string {
	if alone && p.WindowName == p.Role && !strings.ContainsAny(p.Role, ".:") {
		return fmt.Sprintf("%s:%s.%d", session, p.Role, p.Index)
	}
	return fmt.Sprintf("%s:%d.%d", session, p.WindowIndex, p.Index)
}

// pane is rt's pane as tmux shows it now.
func (e *paneEffects) pane(ctx context.Context, rt supervise.Runtime) (mux.Pane, error) {
	p, err := e.env.Tmux.Pane(ctx, rt.Pane)
	if err == nil && p.Role != rt.Role {
		err = fmt.Errorf("pane %s holds role %q now, not %q: %w", rt.Pane, p.Role, rt.Role, mux.ErrNoPane)
	}
	return p, err
}

// Probe says whether an operator is busy in rt's pane: text of theirs in
// the input box, a dialog or menu, copy mode (each holds the pane), or a
// key press of a client showing the pane within the quiet window.
func (e *paneEffects) Probe(ctx context.Context, rt supervise.Runtime) supervise.Probed {
	held := func(why string) supervise.Probed {
		return supervise.Probed{Class: supervise.OperatorBusy, Why: why, Held: true}
	}
	p, screen, err := e.env.Tmux.Inspect(ctx, rt.Pane)
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
	profile := talk.Profile(e.cfg, p)
	st := observe.Read(profile, p, screen)
	switch {
	case st.Dialog != "":
		return held("a dialog is open: " + st.Dialog)
	case st.Menu:
		return held("a menu is open over the input box")
	case st.HasInput && strings.TrimSpace(st.Input) != "":
		return held("the input box holds text that is not ours")
	}
	if last, shown, err := e.env.Tmux.LastKey(ctx, rt.Pane); err == nil && shown {
		if ago := e.env.Clock.Now().Sub(last); ago < e.quiet {
			return supervise.Probed{Class: supervise.OperatorBusy, Why: fmt.Sprintf("a client showing the pane had a key press %s ago", ago.Round(time.Second))}
		}
	}
	return supervise.Probed{}
}

// talkDeps are the turn helpers of talk over the session.
func (e *paneEffects) talkDeps() talk.Deps {
	return talk.Deps{Mux: e.env.Tmux, Clock: e.env.Clock, Getenv: e.env.Getenv, Config: e.cfg, StateDir: e.info.StateDir}
}

// Prepare makes the envelope ready for rt's agent, its turn starting now:
// the turn is placed where the pane stands now (wait.NewMark), the
// position of the paste that follows. The loop saves the record before it
// sends, and Send gets no record to place it later, so the rows are read
// here, just before the delivery: they differ from the paste's only when
// the pane prints in between, which a ready agent does not.
func (e *paneEffects) Prepare(ctx context.Context, rt supervise.Runtime, text string) (string, *supervise.TurnRecord, error) {
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
	turn.Mark, _ = wait.NewMark(ctx, e.env.Tmux, p.ID)
	return text, turn, nil
}

// Send delivers text once to rt's pane through the delivery path.
func (e *paneEffects) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	e.killPoint("record")
	p, err := e.pane(ctx, rt)
	if err != nil {
		return supervise.SendReport{Class: supervise.TargetNotFound, Err: err}
	}
	d := e.env.Deliverer(e.root, e.info, map[string]string{p.ID: rt.Role})
	pasted := false
	d.Step = func(step string) {
		pasted = pasted || step == "paste"
		e.killPoint(step)
	}
	res, err := d.Send(ctx, e.request(rt, p, text))
	e.killPoint("confirm")
	r := supervise.SendReport{Acked: res.Via == "event", Pasted: pasted, Err: err}
	if err == nil {
		r.Outcome = string(res.Outcome)
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
func (e *paneEffects) request(rt supervise.Runtime, p mux.Pane, text string) deliver.Request {
	return deliver.Request{Pane: p.ID, Profile: talk.Profile(e.cfg, p), Text: text,
		AgentsOnly: !slices.Contains(e.cfg.AllowRoles, rt.Role)}
}

// Reclaim finds what a supervisor that stopped mid-delivery left of t: an
// envelope the agent's events (or Codex's rollout) show taken reached it;
// else the text of t.Turn in the input box is party's own paste, taken
// back (deliver.Reclaim), and t goes again; else the envelope on screen
// (its echo above the box) reached it.
func (e *paneEffects) Reclaim(ctx context.Context, rt supervise.Runtime, t supervise.Trigger) (supervise.Sighting, error) {
	s := e.Look(ctx, rt, t)
	if s.Ack == supervise.AckEvent || t.Turn == nil || t.Turn.Prompt == "" {
		return s, nil
	}
	p, err := e.pane(ctx, rt)
	if err != nil || p.Dead {
		return s, nil
	}
	d := e.env.Deliverer(e.root, e.info, map[string]string{p.ID: rt.Role})
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
// scenarios stop it so between each pair of steps.
func (e *paneEffects) killPoint(step string) {
	dir := e.env.Getenv("PARTY_TEST_KILL_DIR")
	if dir == "" || os.Remove(filepath.Join(dir, step)) != nil {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// recordedScope is the session whose tmux server or session is gone (err
// says so), found by its supervisor's store: the one named (--session,
// $PARTY_SESSION), else the one session of this server that has a store
// and is not live. Its records (triggers, runtimes, events) are read from
// the store while tmux cannot say where the session is.
func recordedScope(ctx context.Context, env *Env, err error) (stateDir, name string, ok bool) {
	if !errors.Is(err, mux.ErrNoServer) && !errors.Is(err, mux.ErrNoSession) && !errors.Is(err, session.ErrUnresolved) {
		return "", "", false
	}
	root, rerr := state.Root(env.Getenv)
	if rerr != nil {
		return "", "", false
	}
	socket := env.Tmux.Socket.Resolve(env.Getenv)
	hasStore := func(dir string) bool {
		_, err := os.Stat(filepath.Join(SupervisorDir(dir), supervise.StoreFile))
		return err == nil
	}
	name = env.Session
	if name == "" {
		name = env.Getenv("PARTY_SESSION")
	}
	if name != "" {
		dir := state.SessionDir(root, socket, name)
		return dir, name, hasStore(dir)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "sessions", "*-*"))
	var found []string
	for _, d := range dirs {
		base := filepath.Base(d)
		n := base[:strings.LastIndex(base, "-")]
		if state.SessionDir(root, socket, n) == d && hasStore(d) {
			found, name = append(found, d), n
		}
	}
	if len(found) != 1 {
		return "", "", false
	}
	if live, err := env.Tmux.HasSession(ctx, name); err == nil && live {
		return "", "", false // a session of its own picks it, not its store
	}
	return found[0], name, true
}

// Await waits for the answer of turn, as talk --wait would. A turn whose
// pane is gone, or runs another process than the agent that took it (its
// tmux server died and a new one reuses the pane ids), died with that
// agent: PANE_DEAD at once, not a wait for an answer that never comes.
func (e *paneEffects) Await(ctx context.Context, rt supervise.Runtime, turn supervise.TurnRecord) (string, supervise.Class, error) {
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
	if w, err := state.ListenSession(e.env.Getenv, e.info.StateDir); err == nil {
		defer w.Close()
		wake, waker = w.C, w
	}
	d := e.talkDeps()
	t := d.Turn(ctx, e.env.Tmux, p, talk.Spec{Offset: turn.Offset, Hooks: turn.Hooks, Nonce: turn.Nonce, Prompt: turn.Prompt,
		Since: turn.Since, Rollouts: turn.Rollouts})
	t.Marked(turn.Mark)
	// The agent's hooks may have failed to record the turn's events
	// before this wait listens (its send returns after the first): the
	// note they left says so, and the wait reads the transcript or screen.
	w := &wait.Waiter{Mux: e.env.Tmux, Clock: e.env.Clock, Wake: wake, Poll: e.cfg.PollInterval,
		Unheard: wait.SessionUnheard(waker, e.env.Getenv, e.info.StateDir)}
	res, err := w.Wait(ctx, t, e.cfg.Supervise.TurnTimeout)
	if err != nil {
		if errors.Is(err, deliver.ErrPaneDead) || errors.Is(err, mux.ErrNoPane) {
			return "", supervise.PaneDead, err
		}
		code, _ := Classify(err)
		return "", supervise.Class(code), err
	}
	return res.Answer, "", nil
}

// Look reads what rt's events since the trigger's turn began and its pane
// show of t: the envelope, an ack, whether the agent is idle, its session.
func (e *paneEffects) Look(ctx context.Context, rt supervise.Runtime, t supervise.Trigger) supervise.Sighting {
	var s supervise.Sighting
	mark := supervise.EnvelopeMark(t.ID)
	var offset int64
	if t.Turn != nil {
		offset = t.Turn.Offset
	}
	observe.Events{Path: filepath.Join(e.info.StateDir, state.EventLog)}.Each(rt.Pane, offset, func(ev hook.Event) bool {
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
	p, err := e.env.Tmux.Pane(ctx, rt.Pane)
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
	screen, err := e.env.Tmux.Capture(ctx, rt.Pane, e.cfg.CaptureLines)
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
	st := observe.Read(talk.Profile(e.cfg, p), p, lastScreen(screen, p.Height))
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
func (e *paneEffects) codexTook(pid int, mark string) (string, bool) {
	for _, f := range wait.CodexRolloutFiles(pid, hook.CodexHome(e.env.Getenv), e.env.Clock.Now)() {
		if rolloutHasUserMessage(f, mark) {
			return rolloutThread(f), true
		}
	}
	return "", false
}

// rolloutThread is the thread id in a rollout file's name,
// rollout-<time>-<thread uuid>.jsonl, or "".
func rolloutThread(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(name) < 36 {
		return ""
	}
	id := name[len(name)-36:]
	for i, r := range id {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		if dash != (r == '-') || !dash && !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return ""
		}
	}
	return id
}

// rolloutHasUserMessage says whether the rollout file at path has a user
// message record (event_msg user_message, or item_completed of a
// UserMessage) whose text holds mark.
func rolloutHasUserMessage(path, mark string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if bytes.Contains(line, []byte(mark)) {
			var rec struct {
				Type    string `json:"type"`
				Payload struct {
					Type    string `json:"type"`
					Message string `json:"message"`
					Item    *struct {
						Type    string `json:"type"`
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"item"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Type == "event_msg" {
				pl := rec.Payload
				if pl.Type == "user_message" && strings.Contains(pl.Message, mark) {
					return true
				}
				if pl.Type == "item_completed" && pl.Item != nil && pl.Item.Type == "UserMessage" {
					for _, c := range pl.Item.Content {
						if strings.Contains(c.Text, mark) {
							return true
						}
					}
				}
			}
		}
		if err != nil {
			return false
		}
	}
}
