package talk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// ErrBusy is a talk refused because another one is waiting on the agent.
var ErrBusy = errors.New("agent busy with another request")

// Options are the inputs of one talk.
type Options struct {
	Targets    []mux.Pane // the agent panes to talk to, each with its Role and Agent
	Text       string
	Delay      time.Duration // wait this long before sending
	Wait       bool          // wait for the answers
	Timeout    time.Duration // of each wait, queue included; zero means Config.Timeout
	NoPreamble bool
	Marker     bool // a nonce marker even where hooks are wired
	NoQueue    bool // fail with ErrBusy rather than queue behind another talk
	Clear      bool // empty an input box holding someone else's text
}

// Wakes tells a talk's waits when a pane may have changed.
type Wakes interface {
	// Wake wakes when pane prints or a hook event arrives.
	Wake(pane string) <-chan struct{}
	// Hook wakes on hook events only.
	Hook(pane string) <-chan struct{}
	// Resume lets pane's output wake again once a wait has looked (a
	// watcher may pause a pane's output after each wake-up).
	Resume(ctx context.Context, pane string)
	// Unheard returns the report of a hook of pane that could not record
	// its event (state.Report) at or after since (wait.Waiter.Unheard).
	Unheard(pane string, since time.Time) (state.Report, bool)
	// Mux is the multiplexer the waits look through.
	Mux() mux.Multiplexer
	Close()
}

// Deps are what a talk works with.
type Deps struct {
	Mux    mux.Multiplexer
	Clock  clock.Clock
	Getenv func(string) string // CODEX_HOME, HOME: where Codex keeps its rollouts
	Config config.Config
	// StateDir is the session's state dir: its event log and the records
	// of waiting requests.
	StateDir string
	// LockDir holds the per-pane request locks.
	LockDir string
	// Deliverer is the one delivery path.
	Deliverer *deliver.Deliverer
	// Watch starts the session's wake-ups for a waiting talk; output
	// false says hook events alone suffice. Nil: waits poll.
	Watch func(ctx context.Context, output bool) (Wakes, error)
	// Waiting, when set, is called as a waiting talk's waits begin; the
	// func it returns is called when they have all ended (a progress
	// display, say).
	Waiting func() (stop func())
	// Warn, when set, is told what a wait goes on without (a hook that
	// could not record its event).
	Warn func(msg string)
}

// Result is one target's outcome.
type Result struct {
	Role    string
	Pane    string
	Outcome deliver.Outcome
	Answer  *string // the answer of a waiting talk
	Via     string  // what told the answer: hook, transcript, marker, screen…
	// Turn is when the talk had the agent to itself (after any talk queued
	// before it): the responses of its turn come after.
	Turn    time.Time
	Elapsed time.Duration
	Err     error
}

// Run talks to every target in parallel and returns their results in
// target order. Its error is one that stopped every target (an empty
// message, the delay interrupted, the wake-ups failing to start); each
// target's own failure is in its Result.
func Run(ctx context.Context, d Deps, opts Options) ([]Result, error) {
	if strings.TrimSpace(opts.Text) == "" {
		return nil, fmt.Errorf("%w", deliver.ErrEmpty)
	}
	if opts.Timeout == 0 {
		opts.Timeout = d.Config.Timeout
	}
	if err := d.Clock.Sleep(ctx, opts.Delay); err != nil {
		return nil, err
	}
	t := &talker{d: d, opts: opts, wakes: pollOnly{d.Mux}}
	if opts.Wait && d.Watch != nil {
		output := opts.Marker
		for _, p := range opts.Targets {
			if p.Hooks == "" || d.Config.AgentFor(p.Role, p.Agent).Marker {
				output = true // a marker wait re-reads the screen when it changes
			}
		}
		w, err := d.Watch(ctx, output)
		if err != nil {
			return nil, err
		}
		defer w.Close()
		t.wakes = w
	}
	if opts.Wait && d.Waiting != nil {
		defer d.Waiting()()
	}
	results := make([]Result, len(opts.Targets))
	var wg sync.WaitGroup
	for i, p := range opts.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = t.one(ctx, p)
		}()
	}
	wg.Wait()
	return results, nil
}

// talker carries what every target of one talk shares.
type talker struct {
	d     Deps
	opts  Options
	wakes Wakes
}

// one talks to one pane.
func (t *talker) one(ctx context.Context, p mux.Pane) Result {
	start := t.d.Clock.Now()
	out := Result{Role: p.Role, Pane: p.ID, Outcome: deliver.Failed}
	res, err := t.exchange(ctx, p, &out)
	out.Elapsed = t.d.Clock.Now().Sub(start)
	if err != nil {
		out.Err = err
		return out
	}
	if t.opts.Wait {
		out.Answer, out.Via = &res.Answer, res.Via
	}
	return out
}

func (t *talker) exchange(ctx context.Context, p mux.Pane, out *Result) (wait.Result, error) {
	profile := Profile(t.d.Config, p)
	ac := t.d.Config.AgentFor(p.Role, string(profile.Kind))
	text := t.opts.Text
	if t.d.Config.PreambleMode == "always" && !t.opts.NoPreamble && strings.TrimSpace(ac.Preamble) != "" {
		text = "[SYSTEM: " + strings.TrimSpace(ac.Preamble) + "]\n\n" + text
	}
	if !t.opts.Wait {
		res, err := t.deliver(ctx, p, profile, text, nil)
		out.Outcome = res.Outcome
		return wait.Result{}, err
	}

	// One request per agent, first come first served: hold its request
	// lock until the answer. The time queued counts against the timeout:
	// the queue gives up when the context's time is out, and a turn that
	// comes when the clock's is (a simulated clock) sends nothing.
	deadline := t.d.Clock.Now().Add(t.opts.Timeout)
	qctx, cancelQueue := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancelQueue()
	lctx := qctx
	if t.opts.NoQueue {
		var cancel context.CancelFunc
		lctx, cancel = context.WithCancel(lctx)
		cancel() // try once
	}
	locker := state.Locker{Dir: t.d.LockDir}
	unlock, err := locker.Lock(lctx, "request-"+p.ID)
	if err == nil && !t.d.Clock.Now().Before(deadline) {
		// Its turn came as its time ran out: never send what nobody
		// waits for.
		unlock()
		err = fmt.Errorf("lock request-%s: %w", p.ID, context.DeadlineExceeded)
	}
	if err != nil {
		if t.opts.NoQueue && ctx.Err() == nil {
			return wait.Result{}, fmt.Errorf("%s (%s) is answering another talk (without --no-queue this one would wait its turn): %w", p.Role, p.ID, ErrBusy)
		}
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return wait.Result{}, fmt.Errorf("%s (%s) was still answering earlier talks after %s: %w", p.Role, p.ID, t.opts.Timeout, wait.ErrTimeout)
		}
		return wait.Result{}, err
	}
	defer unlock()
	out.Turn = t.d.Clock.Now()

	text, spec, err := t.d.NewSpec(p, text, t.opts.Marker)
	if err != nil {
		return wait.Result{}, err
	}
	turn := t.d.Turn(ctx, t.wakes.Mux(), p, spec)
	release, err := t.record(p, turn)
	if err != nil {
		return wait.Result{}, err
	}
	defer release()

	wake := t.wakes.Wake(p.ID)
	if turn.Hooks {
		wake = t.wakes.Hook(p.ID)
	}
	// The turn is what follows this paste on screen: the marker answer,
	// and what the screen shows when the agent's events are lost.
	pasting := func(ctx context.Context) {
		mark, _ := wait.NewMark(ctx, t.wakes.Mux(), p.ID)
		turn.Marked(mark)
	}
	res, err := t.deliver(qctx, p, profile, text, pasting)
	out.Outcome = res.Outcome
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		// Its time ran out while the text was being delivered (a slow
		// agent or machine): say so, as a timeout.
		return wait.Result{}, fmt.Errorf("no answer from %s after %s: the delivery had not finished (%v): %w", p.ID, t.opts.Timeout, err, wait.ErrTimeout)
	}
	if err != nil {
		return wait.Result{}, err
	}
	w := &wait.Waiter{Mux: t.wakes.Mux(), Clock: t.d.Clock, Wake: wake, Poll: t.d.Config.PollInterval,
		Resume: func(ctx context.Context) { t.wakes.Resume(ctx, p.ID) }, Unheard: t.wakes.Unheard, Warn: t.d.Warn}
	turn.Started = deadline.Add(-t.opts.Timeout)
	return w.Wait(ctx, turn, t.opts.Timeout)
}

// Profile is the agent profile of pane p, its settle time tuned by cfg.
func Profile(cfg config.Config, p mux.Pane) agent.Profile {
	return cfg.Tune(p.Role, agent.ForPane(agent.Kind(p.Agent), p.Role))
}

// deliver sends text to p; pasting, when set, is called just before the
// paste (deliver.Request.Pasting).
func (t *talker) deliver(ctx context.Context, p mux.Pane, profile agent.Profile, text string, pasting func(context.Context)) (deliver.Result, error) {
	text, err := deliver.Spill(t.d.StateDir, text)
	if err != nil {
		return deliver.Result{Outcome: deliver.Failed}, err
	}
	return t.d.Deliverer.Send(ctx, deliver.Request{Pane: p.ID, Profile: profile, Text: text, Clear: t.opts.Clear, Pasting: pasting})
}

// record writes the request record of a waiting talk, held (an flock)
// until the caller releases it, which removes it. The records of talks
// that were killed are removed here: nothing holds them any more, so they
// never block nor pile up.
func (t *talker) record(p mux.Pane, turn wait.Turn) (release func(), err error) {
	dir := filepath.Join(t.d.StateDir, "requests")
	if err := state.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	state.SweepUnheld(dir, ".json")
	id := wait.NewNonce()
	path := filepath.Join(dir, id+".json")
	rec := map[string]any{"id": id, "pane": p.ID, "role": p.Role, "nonce": turn.Nonce, "hooks": turn.Hooks,
		"anchor": turn.Offset, "created": t.d.Clock.Now().UTC(), "pid": os.Getpid()}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return state.WriteHeld(path, b.Bytes(), 0o600)
}

// pollOnly are the wake-ups of a talk with nothing to watch: none, so
// waits poll.
type pollOnly struct{ m mux.Multiplexer }

func (pollOnly) Wake(string) <-chan struct{}                    { return nil }
func (pollOnly) Hook(string) <-chan struct{}                    { return nil }
func (pollOnly) Resume(context.Context, string)                 {}
func (pollOnly) Unheard(string, time.Time) (state.Report, bool) { return state.Report{}, false }
func (p pollOnly) Mux() mux.Multiplexer                         { return p.m }
func (pollOnly) Close()                                         {}
