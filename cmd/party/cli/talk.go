package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// TalkOptions are the inputs of party talk.
type TalkOptions struct {
	Role       string // a role or "all"
	Text       string
	Stdin      bool
	Delay      time.Duration
	Wait       bool
	Timeout    time.Duration
	NoPreamble bool
	Marker     bool
	NoQueue    bool
	Clear      bool
}

// errBusy is a talk refused because another one is waiting on the agent.
var errBusy = errors.New("agent busy with another request")

func newTalkCmd(f *Factory, runF func(context.Context, *TalkOptions) error) *cobra.Command {
	opts := &TalkOptions{}
	var delay, timeout string
	cmd := &cobra.Command{
		Use:   "talk ROLE|all TEXT|-",
		Short: "Send a message and, with --wait, wait for the agent's answer",
		Long: `Deliver TEXT (or stdin with -) to the agent with ROLE, or to every agent
pane with "all". With --wait, wait for the turn it started to finish and
print the answer on stdout.

Completion is known from the agent's hooks when party started it (claude's
Stop hook, codex's notify), else from a nonce marker the agent is asked to
print (--marker forces that). A timeout exits 4 and shows the last screen;
the pane dying exits 3 at once; Ctrl-C stops waiting (exit 130) and leaves
the agent alone. One request waits per agent at a time: a second talk
waits its turn, or fails at once with --no-queue (exit 5).`,
		Example: `  party talk codex 'Run the tests' --wait --timeout 5m
  party talk all 'Summarize your work so far' --wait --json`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if args[1] == "-" {
				opts.Stdin = true
			} else {
				opts.Text = args[1]
			}
			var err error
			if opts.Delay, err = config.ParseDuration(delay); err != nil {
				return fmt.Errorf("%w: --delay: %w", errUsage, err)
			}
			if c.Flags().Changed("timeout") {
				if opts.Timeout, err = config.ParseDuration(timeout); err != nil {
					return fmt.Errorf("%w: --timeout: %w", errUsage, err)
				}
				if err := config.CheckFlag("--timeout", "defaults.timeout", opts.Timeout); err != nil {
					return fmt.Errorf("%w: %w", errUsage, err)
				}
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return talkRun(c.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&delay, "delay", "0", "wait this long before sending (500ms, 2s, or milliseconds)")
	fl.BoolVar(&opts.Wait, "wait", false, "wait for the answer and print it")
	fl.StringVar(&timeout, "timeout", "", "give up waiting after this long (default: defaults.timeout, 60s)")
	fl.BoolVar(&opts.NoPreamble, "no-preamble", false, "do not prepend the agent's preamble")
	fl.BoolVar(&opts.Marker, "marker", false, "detect completion with a nonce marker even when hooks are wired")
	fl.BoolVar(&opts.NoQueue, "no-queue", false, "fail at once (exit 5) when another talk is waiting on the agent")
	fl.BoolVar(&opts.Clear, "clear", false, "empty the input box first when it holds someone else's text")
	return cmd
}

// talkJSON is one agent's outcome.
type talkJSON struct {
	Role    string          `json:"role"`
	Pane    string          `json:"pane,omitempty"`
	Outcome deliver.Outcome `json:"outcome"`
	Answer  *string         `json:"answer,omitempty"`
	Via     string          `json:"via,omitempty"`
	MS      int64           `json:"ms"`
	Error   *errorJSON      `json:"error,omitempty"`
	err     error
}

func talkRun(ctx context.Context, f *Factory, opts *TalkOptions) error {
	text, err := messageText(f, opts.Text, opts.Stdin)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w", deliver.ErrEmpty)
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if opts.Timeout == 0 {
		opts.Timeout = cfg.Timeout
	}
	tc := f.Tmux()
	info, targets, err := talkTargets(ctx, f, tc, opts.Role)
	if err != nil {
		return err
	}
	session := info.Name
	root, err := f.StateRoot()
	if err != nil {
		return err
	}
	if info.StateDir == "" {
		info.StateDir = state.SessionDir(root, info.SocketPath, session)
	}
	if err := f.Clock.Sleep(ctx, opts.Delay); err != nil {
		return err
	}
	t := &talker{f: f, tc: tc, opts: opts, info: info, root: root, text: text, cfg: cfg}
	if opts.Wait {
		output := opts.Marker
		for _, p := range targets {
			if p.Hooks == "" || cfg.AgentFor(p.Role, p.Agent).Marker {
				output = true // a marker wait re-reads the screen when it changes
			}
		}
		if t.watch, err = newWatcher(ctx, f, tc, session, info.StateDir, output); err != nil {
			return err
		}
		defer t.watch.close()
	}
	results := make([]talkJSON, len(targets))
	var wg sync.WaitGroup
	for i, p := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = t.one(ctx, p)
		}()
	}
	stop := t.progress(ctx, targets)
	wg.Wait()
	stop()
	return t.report(results, opts.Role == "all")
}

// talkTargets resolves ROLE (a registered agent or a tagged pane), or
// every agent pane of the session (not shells) for "all".
func talkTargets(ctx context.Context, f *Factory, tc *tmux.Client, role string) (tmux.SessionInfo, []mux.Pane, error) {
	if role != "all" {
		t, err := resolveRole(ctx, f, tc, role)
		if err != nil {
			return tmux.SessionInfo{}, nil, err
		}
		if t.Pane.Agent == "" {
			t.Pane.Agent = string(t.Profile.Kind)
		}
		return t.Info, []mux.Pane{t.Pane}, nil
	}
	sc, err := openScope(ctx, f, tc)
	if err != nil {
		return tmux.SessionInfo{}, nil, err
	}
	var out []mux.Pane
	for _, p := range sc.Panes {
		if p.Role != "" && p.Agent != "" && agent.Kind(p.Agent) != agent.Shell {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return tmux.SessionInfo{}, nil, fmt.Errorf("session %s has no agent panes: %w", sc.Session, route.ErrNotFound)
	}
	return sc.Info, out, nil
}

// talker carries what every target of one talk shares.
type talker struct {
	f    *Factory
	tc   *tmux.Client
	opts *TalkOptions
	cfg  config.Config
	info tmux.SessionInfo
	root string
	text string

	watch *watcher
}

// one talks to one pane.
func (t *talker) one(ctx context.Context, p mux.Pane) talkJSON {
	start := t.f.Clock.Now()
	out := talkJSON{Role: p.Role, Pane: p.ID, Outcome: deliver.Failed}
	res, err := t.exchange(ctx, p, &out)
	out.MS = t.f.Clock.Now().Sub(start).Milliseconds()
	if err != nil {
		code, _ := classify(err)
		out.err, out.Error = err, &errorJSON{Code: code, Message: err.Error()}
		return out
	}
	if t.opts.Wait {
		out.Answer, out.Via = &res.Answer, res.Via
	}
	return out
}

func (t *talker) exchange(ctx context.Context, p mux.Pane, out *talkJSON) (wait.Result, error) {
	profile := tuned(t.cfg, p.Role, profileOf(p))
	ac := t.cfg.AgentFor(p.Role, string(profile.Kind))
	lockDir := lockDir(t.root, t.info.SocketPath)
	text := t.text
	if t.cfg.PreambleMode == "always" && !t.opts.NoPreamble && strings.TrimSpace(ac.Preamble) != "" {
		text = "[SYSTEM: " + strings.TrimSpace(ac.Preamble) + "]\n\n" + text
	}
	if !t.opts.Wait {
		res, err := t.deliver(ctx, p, profile, text)
		out.Outcome = res.Outcome
		return wait.Result{}, err
	}

	// One request per agent, first come first served: hold its request
	// lock until the answer. The time queued counts against --timeout.
	deadline := t.f.Clock.Now().Add(t.opts.Timeout)
	qctx, cancelQueue := context.WithDeadline(ctx, deadline)
	defer cancelQueue()
	lctx := qctx
	if t.opts.NoQueue {
		var cancel context.CancelFunc
		lctx, cancel = context.WithCancel(lctx)
		cancel() // try once
	}
	unlock, err := state.Locker{Dir: lockDir, Clock: t.f.Clock}.Lock(lctx, "request-"+p.ID)
	if err != nil {
		if t.opts.NoQueue && ctx.Err() == nil {
			return wait.Result{}, fmt.Errorf("%s (%s) is answering another talk (without --no-queue this one would wait its turn): %w", p.Role, p.ID, errBusy)
		}
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return wait.Result{}, fmt.Errorf("%s (%s) was still answering earlier talks after %s: %w", p.Role, p.ID, t.opts.Timeout, wait.ErrTimeout)
		}
		return wait.Result{}, err
	}
	defer unlock()

	events := filepath.Join(t.info.StateDir, state.EventLog)
	turn := wait.Turn{Pane: p.ID, Hooks: p.Hooks != "" && !t.opts.Marker && !ac.Marker, Events: events,
		Offset: state.Size(events), History: t.cfg.CaptureLines}
	if !turn.Hooks {
		turn.Nonce = wait.NewNonce()
		text += wait.Instruction(turn.Nonce)
	}
	// A text too long to paste goes to a file: the agent gets, and the
	// wait follows, the pointer.
	if text, err = t.spill(text); err != nil {
		return wait.Result{}, err
	}
	turn.Prompt = deliver.Sanitize(text)
	t.codexRollout(ctx, p, profile.Kind, &turn)
	capture := func() (string, error) { return t.watch.mux(t.tc).Capture(ctx, p.ID, 0) }
	switch {
	case turn.Hooks && profile.Kind == agent.Claude:
		// No hook on an Esc or a refused permission: the transcript (and
		// the prompt put back into the box) says so.
		turn.Sources = append(turn.Sources, wait.NewClaudeTranscript(events, p.ID, turn.Prompt, profile, capture))
	case turn.Hooks && profile.Kind == agent.Gemini:
		// No AfterAgent on an Esc: only the screen says it.
		turn.Sources = append(turn.Sources, wait.NewGeminiScreen(turn.Prompt, capture))
	}
	rec, err := t.record(p, turn)
	if err != nil {
		return wait.Result{}, err
	}
	defer os.Remove(rec)

	wake := t.watch.wakeChan(p.ID)
	if turn.Hooks {
		wake = t.watch.hookChan(p.ID)
	}
	res, err := t.deliver(qctx, p, profile, text)
	out.Outcome = res.Outcome
	if err != nil {
		return wait.Result{}, err
	}
	w := &wait.Waiter{Mux: t.watch.mux(t.tc), Clock: t.f.Clock, Wake: wake, Poll: t.cfg.PollInterval}
	turn.Started = deadline.Add(-t.opts.Timeout)
	return w.Wait(ctx, turn, t.opts.Timeout)
}

func (t *talker) spill(text string) (string, error) {
	if len(text) <= maxPaste {
		return text, nil
	}
	return spill(t.root, t.info, text)
}

func (t *talker) deliver(ctx context.Context, p mux.Pane, profile agent.Profile, text string) (deliver.Result, error) {
	text, err := t.spill(text)
	if err != nil {
		return deliver.Result{Outcome: deliver.Failed}, err
	}
	d := deliverer(t.f, t.tc, t.root, t.info, map[string]string{p.ID: p.Role})
	return d.Send(ctx, deliver.Request{Pane: p.ID, Profile: profile, Text: text, Clear: t.opts.Clear})
}

// record writes the request record of a waiting talk; the caller removes
// it when done. A crashed talk leaves a record but no lock, so it never
// blocks the next one.
func (t *talker) record(p mux.Pane, turn wait.Turn) (string, error) {
	dir := filepath.Join(t.info.StateDir, "requests")
	if err := state.MkdirPrivate(dir); err != nil {
		return "", err
	}
	id := wait.NewNonce()
	path := filepath.Join(dir, id+".json")
	rec := map[string]any{"id": id, "pane": p.ID, "role": p.Role, "nonce": turn.Nonce, "hooks": turn.Hooks,
		"anchor": turn.Offset, "created": t.f.Clock.Now().UTC(), "pid": os.Getpid()}
	return path, writeJSONFile(path, rec)
}

// progress shows that talk is waiting, on stderr only: a spinner line on a
// terminal, a line every 5 seconds otherwise. The returned func stops it.
func (t *talker) progress(ctx context.Context, targets []mux.Pane) func() {
	if !t.opts.Wait {
		return func() {}
	}
	roles := make([]string, len(targets))
	for i, p := range targets {
		roles[i] = p.Role
	}
	who := strings.Join(roles, ", ")
	tty := isTerminal(t.f.IO.ErrOut)
	every := 5 * time.Second
	if tty {
		every = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := t.f.Clock.Now()
	go func() {
		defer close(done)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		for i := 0; ; i++ {
			if t.f.Clock.Sleep(ctx, every) != nil {
				if tty {
					fmt.Fprint(t.f.IO.ErrOut, "\r\033[K")
				}
				return
			}
			secs := int(t.f.Clock.Now().Sub(start).Seconds())
			if tty {
				fmt.Fprintf(t.f.IO.ErrOut, "\r\033[K%c Waiting for %s… %ds", frames[i%len(frames)], who, secs)
			} else {
				fmt.Fprintf(t.f.IO.ErrOut, "party: waiting for %s… %ds\n", who, secs)
			}
		}
	}()
	return func() { cancel(); <-done }
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// report prints the results and returns the first error.
func (t *talker) report(results []talkJSON, all bool) error {
	var first error
	for _, r := range results {
		if r.err != nil && first == nil {
			first = r.err
		}
	}
	if t.f.JSON {
		if all {
			writeJSON(t.f.IO.Out, results)
		} else {
			writeJSON(t.f.IO.Out, results[0])
		}
		if first != nil {
			return &reported{error: first, json: true}
		}
		return nil
	}
	for _, r := range results {
		switch {
		case r.err != nil && all:
			fmt.Fprintf(t.f.IO.ErrOut, "party: %s (%s): %v\n", r.Role, r.Pane, r.err)
		case r.err != nil:
		case t.opts.Wait && all:
			fmt.Fprintf(t.f.IO.Out, "== %s (%s)\n%s\n", r.Role, r.Pane, *r.Answer)
		case t.opts.Wait:
			fmt.Fprintln(t.f.IO.Out, *r.Answer)
		default:
			fmt.Fprintf(t.f.IO.Out, "%s to %s (%s)\n", r.Outcome, r.Role, r.Pane)
		}
	}
	if all && first != nil {
		return &reported{error: first, text: true}
	}
	return first
}
