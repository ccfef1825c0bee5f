package notify

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// The notifier's files in its directory (Dir), besides a daemon's
// (daemon.LockFile, daemon.KeeperLock, daemon.LogFile).
const (
	stateFile = "state.json"
	// LogFile lists, a JSON line each, every event the notifier decided
	// on: the verdict and what each sink did.
	LogFile = "told.jsonl"
)

// Dir is the notifier's directory in a session's state dir.
func Dir(stateDir string) string { return filepath.Join(stateDir, "notify") }

// Status says whether the notifier of a session runs.
type Status struct {
	Session string `json:"session"`
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Dir     string `json:"dir"`
}

// Running says whether the notifier of session, whose state dir is
// stateDir, runs: whether its lock is held (a process that holds it is
// alive), and by which pid (daemon.Running).
func Running(session, stateDir string) Status {
	dir := Dir(stateDir)
	p := daemon.Running(dir)
	return Status{Session: session, Running: p.Running, PID: p.PID, Dir: dir}
}

// New is the notifier of session, whose state dir is stateDir, as cfg
// sets it up: the gate's policy, the long turns and the sinks, which
// tell through tm. Audit, Roles and Since are the caller's to set.
func New(cfg config.Notify, session, stateDir string, tm Tmux) (*Notifier, error) {
	pol, err := newPolicy(cfg)
	if err != nil {
		return nil, err
	}
	return &Notifier{Session: session, StateDir: stateDir, Dir: Dir(stateDir), Policy: pol, LongTurn: cfg.LongTurn,
		Tell: NewSinks(cfg, session, tm).Tell}, nil
}

// newPolicy is the gate's policy of cfg.
func newPolicy(cfg config.Notify) (Policy, error) {
	on, err := ParseKinds(cfg.Events)
	if err != nil {
		return Policy{}, fmt.Errorf("notify.events: %w: %w", err, config.ErrInvalid)
	}
	return Policy{On: on, Dedupe: cfg.Dedupe, Burst: cfg.PerMinute, Window: time.Minute}, nil
}

// NewSinks are the sinks of cfg for session, telling through tm ("" when
// there is none: no tmux or terminal sink).
func NewSinks(cfg config.Notify, session string, tm Tmux) Sinks {
	on := map[string]bool{}
	for _, w := range strings.FieldsFunc(cfg.Sinks, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch w {
		case "all":
			for _, s := range SinkNames {
				on[s] = true
			}
		default:
			on[w] = true
		}
	}
	s := Sinks{On: on, Session: session, Webhook: cfg.Webhook, Topic: cfg.Topic,
		HTTP: &http.Client{Timeout: 5 * time.Second}, LookPath: exec.LookPath, GOOS: runtime.GOOS,
		Display: 8 * time.Second,
		Exec: func(ctx context.Context, argv []string) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return exec.CommandContext(ctx, argv[0], argv[1:]...).Run()
		}}
	if session != "" {
		s.Tmux = tm
	}
	return s
}

// AuditLog is what the notifier asks of the supervisor's API
// (*supervise.Client): the audit events after one, waiting up to wait.
type AuditLog interface {
	Events(ctx context.Context, after int64, limit int, wait time.Duration) ([]supervise.AuditEvent, error)
}

// Notifier reads a session's sources, decides and tells; Watch is its
// state, saved in Dir before anything is told.
type Notifier struct {
	Session, StateDir, Dir string
	Policy                 Policy
	LongTurn               time.Duration
	Tell                   func(context.Context, Event) []Result
	Roles                  func(context.Context) map[string]string
	// Audit is the supervisor's audit trail.
	Audit AuditLog
	// Budgets, when set, are the team's budgets as they stand: looked at
	// when a turn ended, and at each pass for budgetLag after it (an
	// agent records a turn's usage a moment after its end: Claude Code's
	// transcript).
	Budgets func() []BudgetUse
	// Since: a notifier with no saved state tells nothing older (what
	// happened before it ran is history), but reads it for the turns.
	Since time.Time

	w Watch
	// clock is Run's; budgetsUntil is when the budgets stop being looked
	// at after the last turn end.
	clock        clock.Clock
	budgetsUntil time.Time
}

// budgetLag is how long after a turn's end the budgets are looked at
// again at each pass.
const budgetLag = 3 * time.Second

// Load reads the saved state; with none, it starts at the beginning of
// the sources and tells what is newer than Since.
func (n *Notifier) Load() error {
	b, err := os.ReadFile(filepath.Join(n.Dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		n.w = Watch{}
		return nil
	}
	if err != nil {
		return err
	}
	n.Since = time.Time{}
	if err := json.Unmarshal(b, &n.w); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(n.Dir, stateFile), err)
	}
	return nil
}

func (n *Notifier) save() error {
	b, err := json.Marshal(n.w)
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(n.Dir, stateFile), b, 0o600)
}

// Told is one line of LogFile: an event, the gate's verdict and what each
// sink did when it was told.
type Told struct {
	Event   Event    `json:"event"`
	Verdict string   `json:"verdict"`
	Results []Result `json:"results,omitempty"`
}

// Pass reads what the sources have new, decides on each event, saves the
// state and then tells what passed the gate. It returns what it decided.
func (n *Notifier) Pass(ctx context.Context) ([]Told, error) {
	var evs []Event
	var ended time.Time // when the last turn read ended: the agents spent more
	if err := n.readEvents(func(ev hook.Event) {
		var out []Event
		n.w, out = n.w.Hook(n.Session, ev, n.LongTurn)
		evs = append(evs, out...)
		if ev.Kind == hook.TurnComplete || ev.Kind == hook.TurnFailed {
			ended = ev.Time
		}
	}); err != nil {
		return nil, err
	}
	if n.Budgets != nil {
		if n.clock != nil && !ended.IsZero() {
			n.budgetsUntil = n.clock.Now().Add(budgetLag)
		}
		if !ended.IsZero() || (n.clock != nil && n.clock.Now().Before(n.budgetsUntil)) {
			at := ended
			if n.clock != nil {
				at = n.clock.Now().UTC()
			}
			var out []Event
			n.w, out = n.w.Budget(n.Session, n.Budgets(), at)
			evs = append(evs, out...)
		}
	}
	if st, err := review.Load(review.Dir(n.StateDir)); err == nil {
		var out []Event
		n.w, out = n.w.ReviewState(n.Session, st)
		evs = append(evs, out...)
	}
	if err := n.readAudit(ctx, func(a supervise.AuditEvent) {
		var out []Event
		n.w, out = n.w.Audit(n.Session, a)
		evs = append(evs, out...)
	}); err != nil {
		return nil, err
	}
	var roles map[string]string
	var decided []Told
	for _, ev := range evs {
		if ev.At.Before(n.Since) {
			continue
		}
		if ev.Role == "" && ev.Pane != "" {
			if roles == nil && n.Roles != nil {
				roles = n.Roles(ctx)
			}
			ev.Role = roles[ev.Pane]
		}
		var v Verdict
		n.w.Gate, v = Step(n.Policy, n.w.Gate, ev)
		decided = append(decided, Told{Event: ev, Verdict: v.String()})
	}
	// Saved before telling: killed in between, the notifier loses what
	// it was telling rather than tell it twice.
	if err := n.save(); err != nil {
		return nil, err
	}
	for i := range decided {
		if decided[i].Verdict == Tell.String() {
			decided[i].Results = n.Tell(ctx, decided[i].Event)
		}
		if err := state.AppendEvent(filepath.Join(n.Dir, LogFile), decided[i]); err != nil {
			return decided, err
		}
	}
	return decided, nil
}

// readEvents gives each whole line of the event log after the saved
// offset to f; a log shorter than the offset was replaced: read it anew.
func (n *Notifier) readEvents(f func(hook.Event)) error {
	file, err := os.Open(filepath.Join(n.StateDir, state.EventLog))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && fi.Size() < n.w.Offset {
		n.w.Offset = 0
	}
	if _, err := file.Seek(n.w.Offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReader(file)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil // EOF, or a line still being written
		}
		n.w.Offset += int64(len(line))
		var ev hook.Event
		if json.Unmarshal(line, &ev) == nil && ev.Pane != "" {
			f(ev)
		}
	}
}

// readAudit gives each supervisor audit event after the saved one to f,
// asked of the supervisor's API; while none runs there is nothing new.
func (n *Notifier) readAudit(ctx context.Context, f func(supervise.AuditEvent)) error {
	evs, err := n.Audit.Events(ctx, n.w.AuditSeq, 1000, 0)
	if errors.Is(err, supervise.ErrNotRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range evs {
		f(a)
	}
	return nil
}

// Run resumes from the saved state (Load) and then passes (Pass)
// whenever wake has something and at least once a second of clk, until
// ctx ends; then it returns nil. Each decision is written to log as a
// JSON line; an error of a pass goes to warn, and the next pass tries
// again. Once wake is closed, the clock alone wakes it. Run starts one
// goroutine per wait, which ends with that wait.
func (n *Notifier) Run(ctx context.Context, clk clock.Clock, wake <-chan struct{}, log io.Writer, warn func(error)) error {
	if err := n.Load(); err != nil {
		return err
	}
	n.clock = clk
	for {
		decided, err := n.Pass(ctx)
		for _, d := range decided {
			b, _ := json.Marshal(d)
			fmt.Fprintf(log, "%s\n", b)
		}
		if err != nil {
			warn(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		var closed atomic.Bool
		// It ends on a wake-up or when the wait ends (wctx), whichever
		// comes first: one at a time.
		go func(wake <-chan struct{}) {
			select {
			case _, ok := <-wake:
				closed.Store(!ok)
				cancel()
			case <-wctx.Done():
			}
		}(wake)
		_ = clk.Sleep(wctx, time.Second)
		cancel()
		if closed.Load() {
			wake = nil // the clock alone from now on
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}
