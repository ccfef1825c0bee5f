package party

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
)

// TalkOptions are the inputs of Talk.
type TalkOptions struct {
	Role       string // a role, or "all": every agent pane of the session
	Text       string
	Delay      time.Duration // wait this long before sending
	Wait       bool          // wait for the answers
	Timeout    time.Duration // of each wait, queue included; zero means defaults.timeout
	NoPreamble bool          // do not prepend the agent's preamble
	Marker     bool          // a nonce marker even where hooks are wired
	NoQueue    bool          // fail with talk.ErrBusy rather than queue behind another talk
	Clear      bool          // empty an input box holding someone else's text
	// Usage gives each answered turn its usage (TalkOutcome.Usage), which
	// may wait a moment for the agent's record of it.
	Usage bool
	// Force with Why talks to an agent whose budget is spent; the
	// override is logged.
	Force bool
	Why   string
}

// Talk delivers opts.Text to the agents of opts.Role and, with opts.Wait,
// waits for their answers while a progress line runs on env.Stderr
// (talk.Run). Its error stopped every agent; each agent's own failure is
// in its outcome.
func Talk(ctx context.Context, env *Env, opts TalkOptions) ([]TalkOutcome, error) {
	if strings.TrimSpace(opts.Text) == "" {
		return nil, fmt.Errorf("%w", deliver.ErrEmpty)
	}
	role, host, err := remote.RoleAt(opts.Role)
	if err != nil {
		return nil, err
	}
	if host != "" {
		return hostTalk(ctx, env, role, host, opts)
	}
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	info, targets, err := env.Resolver().Targets(ctx, opts.Role)
	if err != nil {
		host, err := roleElsewhere(ctx, env, opts.Role, err)
		if host == "" {
			return nil, err
		}
		return hostTalk(ctx, env, opts.Role, host, opts)
	}
	root, err := env.StateRoot()
	if err != nil {
		return nil, err
	}
	info.StateDir = session.StateDir(root, info)
	for _, p := range targets {
		if err := checkBudget(env, info.Name, info.StateDir, p.Role, opts.Force, opts.Why); err != nil {
			return nil, err
		}
	}
	deps := talk.Deps{Mux: env.Tmux, Clock: env.Clock, Getenv: env.Getenv, Config: cfg, StateDir: info.StateDir,
		LockDir: deliver.LockDir(root, info.SocketPath), Deliverer: env.Deliverer(root, info, roles.ByPane(targets)),
		Watch: func(ctx context.Context, output bool) (talk.Wakes, error) {
			return env.Watch(ctx, info.Name, info.StateDir, output, true)
		},
		Warn: func(msg string) { env.Warnf("%s", msg) }}
	if opts.Wait {
		deps.Waiting = func() func() {
			return talk.Progress(ctx, env.Clock, env.Stderr, env.StderrTTY, roleNames(targets))
		}
	}
	results, err := talk.Run(ctx, deps, talk.Options{Targets: targets, Text: opts.Text, Delay: opts.Delay, Wait: opts.Wait,
		Timeout: opts.Timeout, NoPreamble: opts.NoPreamble, Marker: opts.Marker, NoQueue: opts.NoQueue, Clear: opts.Clear})
	if err != nil {
		return nil, err
	}
	recordTalks(ctx, env, info.StateDir, utf8.RuneCountInString(opts.Text), results)
	out := make([]TalkOutcome, len(results))
	for i, r := range results {
		out[i] = TalkOutcome{Role: r.Role, Pane: r.Pane, Outcome: r.Outcome, Answer: r.Answer, Via: r.Via,
			MS: r.Elapsed.Milliseconds(), Error: exitcode.ErrorOf(r.Err), Err: r.Err}
	}
	if opts.Wait && opts.Usage {
		turnUsage(ctx, env, info.StateDir, targets, results, out)
	}
	return out, nil
}

// TalkOutcome is one agent's outcome of Talk, as party talk --json prints
// it; Err is its failure.
type TalkOutcome struct {
	Role string `json:"role"`
	// Host is the host the role is on (ROLE@HOST); none: this one.
	Host    string          `json:"host,omitempty"`
	Pane    string          `json:"pane,omitempty"`
	Outcome deliver.Outcome `json:"outcome"`
	Answer  *string         `json:"answer,omitempty"` // with Wait, when it came
	Via     string          `json:"via,omitempty"`
	MS      int64           `json:"ms"`
	// Usage is what the answered turn spent, from the agent's own records
	// (party usage's reading), when they carry it.
	Usage *TurnUsage          `json:"usage,omitempty"`
	Error *exitcode.ErrorInfo `json:"error,omitempty"`
	Err   error               `json:"-"`
}

// recordTalks tells the supervisor of the session in stateDir, when one
// serves, of each talk that ended, for its audit (talk_ended: answered,
// the error code of one that failed, else the delivery's outcome): from the
// runtime whose pane talked (its token, when the pane is of this session),
// else from the operator. A talk is party talk's own delivery: no
// supervisor is waited for or started, and one that cannot record it
// costs the talk nothing but a warning.
func recordTalks(ctx context.Context, env *Env, stateDir string, chars int, results []talk.Result) {
	if p, ok := supervise.ReadProc(supervise.Dir(stateDir)); !ok || p.State != supervise.ProcServing {
		return
	}
	c, err := operatorClient(env, stateDir)
	if err != nil {
		return
	}
	defer c.HTTP.CloseIdleConnections()
	if env.Getenv("PARTY_STATE_DIR") == stateDir {
		c.RuntimeToken = env.Getenv("PARTY_RUNTIME_TOKEN")
	}
	c.Operator = env.Getenv("PARTY_OPERATOR")
	// Also after a ^C: the talk that was taken back is recorded too.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
	defer cancel()
	for _, r := range results {
		outcome := string(r.Outcome) // the delivery's, when no answer was waited for
		switch {
		case r.Answer != nil:
			outcome = "answered"
		case r.Err != nil:
			outcome = exitcode.ErrorOf(r.Err).Code
		}
		rec := supervise.TalkRecord{Role: r.Role, Outcome: outcome, MS: r.Elapsed.Milliseconds(), Chars: chars}
		if err := c.Talked(ctx, rec); err != nil {
			env.Warnf("warning: the supervisor did not record the talk to %s: %v", r.Role, err)
		}
	}
}

// recordWait bounds recordTalks' calls.
const recordWait = 2 * time.Second

// roleNames are the roles of panes, in their order.
func roleNames(panes []mux.Pane) []string {
	out := make([]string, len(panes))
	for i, p := range panes {
		out[i] = p.Role
	}
	return out
}
